import { afterEach, describe, expect, it, vi } from 'vitest'
import { every } from './every.js'

describe('every', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('runs after the first delay, then every interval, never overlapping, until aborted', async () => {
    vi.useFakeTimers()
    const controller = new AbortController()
    const starts: number[] = []
    let running = 0
    let overlapped = false
    every(
      1000,
      async () => {
        overlapped ||= running > 0
        running++
        starts.push(Date.now())
        await new Promise((resolve) => setTimeout(resolve, 1500))
        running--
      },
      { log: { error: () => {} }, signal: controller.signal, firstRunAfter: 10 },
    )
    const t0 = Date.now()
    await vi.advanceTimersByTimeAsync(10 + 1500 + 1000 + 1500 + 1000 + 1)
    controller.abort()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(starts.map((start) => start - t0)).toEqual([10, 2510, 5010])
    expect(overlapped).toBe(false)
  })

  it('logs a failed run and keeps the schedule', async () => {
    vi.useFakeTimers()
    const controller = new AbortController()
    const errors: unknown[] = []
    let runs = 0
    every(
      100,
      async () => {
        runs++
        throw new Error('boom')
      },
      { log: { error: (obj) => errors.push(obj) }, signal: controller.signal },
    )
    await vi.advanceTimersByTimeAsync(350)
    controller.abort()
    expect(runs).toBe(3)
    expect(errors).toHaveLength(3)
  })
})
