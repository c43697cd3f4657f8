import { describe, expect, it, vi } from 'vitest'
import { createAckBatcher } from './ack-batcher'

describe('acknowledgement batches', () => {
  it('sends the ids shown close together in one request, at most 100 per request', async () => {
    vi.useFakeTimers()
    try {
      const sent: string[][] = []
      const batcher = createAckBatcher({ send: async (batch) => sent.push(batch), delayMs: 50 })
      batcher.add(['a', 'b'])
      batcher.add(['b', 'c'])
      batcher.add(Array.from({ length: 100 }, (_, i) => `n${i}`))
      await vi.advanceTimersByTimeAsync(60)
      expect(sent.map((batch) => batch.length)).toEqual([100, 3])
      expect(sent.flat().slice(0, 3)).toEqual(['a', 'b', 'c'])
      expect(batcher.pendingCount).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })

  it('keeps the ids of a failed request and sends them again later', async () => {
    vi.useFakeTimers()
    try {
      const sent: string[][] = []
      let failures = 1
      const send = async (batch: string[]) => {
        if (failures-- > 0) {
          throw new Error('relay down')
        }
        sent.push(batch)
      }
      const batcher = createAckBatcher({ send, delayMs: 10, retryMs: 1000 })
      batcher.add(['a'])
      await vi.advanceTimersByTimeAsync(20)
      expect(sent).toEqual([])
      expect(batcher.pendingCount).toBe(1)
      batcher.add(['b'])
      await vi.advanceTimersByTimeAsync(1000)
      expect(sent).toEqual([['a', 'b']])
    } finally {
      vi.useRealTimers()
    }
  })
})
