import { featureFlagDefaults } from '@relay/contracts'
import { describe, expect, it, vi } from 'vitest'
import { createAckBatcher } from '../src/notifications/ack-batcher'
import { displayDuration, isCategoryShown } from '../src/notifications/notification-rules'
import { createToastQueue, receive, release, takeShowable } from '../src/notifications/toast-queue'
import { formatRelativeTime } from '../src/ui/format-relative-time'

// Pure logic behind the toasts; runs in Node beside the browser tests.

type Item = { id: string; hidden?: boolean }
const items = (...ids: string[]): Item[] => ids.map((id) => ({ id }))
const ids = (list: readonly Item[]) => list.map((item) => item.id)

describe('toast queue', () => {
  it('shows up to the limit and keeps the rest waiting in arrival order', () => {
    const queue = receive(createToastQueue<Item>(), items('a', 'b', 'c', 'd'))
    const taken = takeShowable(queue, 2)
    expect(ids(taken.show)).toEqual(['a', 'b'])
    expect(taken.queue.visible).toEqual(['a', 'b'])
    expect(ids(taken.queue.waiting)).toEqual(['c', 'd'])
    expect(takeShowable(taken.queue, 2).show).toEqual([])
  })

  it('fills a freed slot with the next waiting notification', () => {
    let queue = takeShowable(receive(createToastQueue<Item>(), items('a', 'b', 'c')), 2).queue
    queue = release(queue, 'b')
    const taken = takeShowable(queue, 2)
    expect(ids(taken.show)).toEqual(['c'])
    expect(taken.queue.visible).toEqual(['a', 'c'])
  })

  it('ignores a notification it has already received, shown or not', () => {
    let queue = takeShowable(receive(createToastQueue<Item>(), items('a', 'b')), 1).queue
    queue = receive(queue, items('a', 'b', 'c'))
    expect(ids(queue.waiting)).toEqual(['b', 'c'])
    queue = release(queue, 'a')
    queue = receive(queue, items('a'))
    expect(ids(takeShowable(queue, 5).show)).toEqual(['b', 'c'])
  })

  it('lets hidden notifications leave the line without taking a slot', () => {
    const queue = receive(createToastQueue<Item>(), [{ id: 'a', hidden: true }, { id: 'b' }, { id: 'c', hidden: true }])
    const taken = takeShowable(queue, 1, (item) => !item.hidden)
    expect(ids(taken.show)).toEqual(['b'])
    expect(ids(taken.skipped)).toEqual(['a'])
    expect(ids(taken.queue.waiting)).toEqual(['c'])
  })

  it('shows more when the limit rises and closes none when it falls', () => {
    let queue = takeShowable(receive(createToastQueue<Item>(), items('a', 'b', 'c', 'd')), 1).queue
    queue = takeShowable(queue, 3).queue
    expect(queue.visible).toEqual(['a', 'b', 'c'])
    const lowered = takeShowable(queue, 1)
    expect(lowered.show).toEqual([])
    expect(lowered.queue.visible).toEqual(['a', 'b', 'c'])
  })

  it('treats releasing an unknown id as a no-op', () => {
    const queue = takeShowable(receive(createToastQueue<Item>(), items('a')), 1).queue
    expect(release(queue, 'zzz')).toBe(queue)
  })
})

describe('notification rules', () => {
  const flags = { ...featureFlagDefaults, notifications_duration_success: 3000, notifications_duration_error: 9000 }

  it("uses the notification's own duration first", () => {
    expect(displayDuration({ type: 'error', duration: 1500 }, flags)).toBe(1500)
  })

  it('uses the duration flags for success and error, and the type defaults otherwise', () => {
    expect(displayDuration({ type: 'success', duration: null }, flags)).toBe(3000)
    expect(displayDuration({ type: 'error', duration: null }, flags)).toBe(9000)
    expect(displayDuration({ type: 'warning', duration: null }, flags)).toBe(7000)
    expect(displayDuration({ type: 'info', duration: null }, flags)).toBe(6000)
  })

  it('shows a category only while its flag is on', () => {
    const off = { ...featureFlagDefaults, notifications_cloud_sync: false }
    expect(isCategoryShown('cloud', off)).toBe(false)
    expect(isCategoryShown('system', off)).toBe(true)
  })
})

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

describe('relative time', () => {
  const now = new Date('2025-06-15T12:00:00Z')
  const ago = (ms: number) => new Date(now.getTime() - ms)

  it.each([
    [10_000, 'just now'],
    [-5_000, 'just now'],
    [3 * 60_000, '3 min ago'],
    [59 * 60_000, '59 min ago'],
    [5 * 3_600_000, '5 h ago'],
    [2 * 86_400_000, '2 d ago'],
    [-14 * 60_000, 'in 14 min'],
    [-3 * 3_600_000, 'in 3 h'],
  ])('%i ms ago reads "%s"', (ms, text) => {
    expect(formatRelativeTime(ago(ms), now, 'en-GB')).toBe(text)
  })

  it('gives the date for anything a week old or more, with the year when it differs', () => {
    expect(formatRelativeTime(ago(10 * 86_400_000), now, 'en-GB')).toBe('5 Jun')
    expect(formatRelativeTime(new Date('2024-03-12T12:00:00Z'), now, 'en-GB')).toBe('12 Mar 2024')
  })
})
