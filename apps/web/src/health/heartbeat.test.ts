import type { HealthBucket } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { heartbeatMinutes, heartbeatRange, heartbeatSlots, heartbeatSummary } from './heartbeat'

const polls = { singular: 'poll', plural: 'polls' }
const utcClock = (date: Date) => date.toISOString().slice(11, 16)

const bucket = (start: string, ok: number, failed: number, lastError: string | null = null): HealthBucket => ({
  start,
  ok,
  failed,
  meanLatencyMs: 12.4,
  maxLatencyMs: 30,
  lastError,
})

describe('heartbeat bar', () => {
  it('asks for the last 60 whole minutes, the current one included', () => {
    expect(heartbeatRange(new Date('2026-01-01T12:04:31.500Z'))).toEqual({
      from: '2026-01-01T11:05:00.000Z',
      to: '2026-01-01T12:05:00.000Z',
    })
  })

  it('gives one slot per minute, placing each bucket on its minute and the missing ones idle', () => {
    const { from } = heartbeatRange(new Date('2026-01-01T12:04:31.500Z'))
    const slots = heartbeatSlots(
      from,
      [
        bucket('2026-01-01T12:04:00.000Z', 9, 3, 'connect ECONNREFUSED 127.0.0.1:1'),
        bucket('2026-01-01T12:03:00.000Z', 0, 1, 'timeout'),
        bucket('2026-01-01T11:05:00.000Z', 12, 0),
      ],
      polls,
      utcClock,
    )
    expect(slots).toHaveLength(heartbeatMinutes)
    expect(slots.map((slot) => slot.status).filter((status) => status !== 'idle')).toEqual(['ok', 'failed', 'partial'])
    expect(slots[0]?.label).toBe('11:05, 12 polls ok, 12 ms on average')
    expect(slots[1]?.label).toBe('11:06, no polls')
    expect(slots[58]?.label).toBe('12:03, 1 failed of 1 poll, last error timeout')
    expect(slots[59]?.label).toBe('12:04, 3 failed of 12 polls, last error connect ECONNREFUSED 127.0.0.1:1')
  })

  it('sums the bar up in words', () => {
    const { from } = heartbeatRange(new Date('2026-01-01T12:04:00.000Z'))
    const summary = (buckets: HealthBucket[]) => heartbeatSummary(heartbeatSlots(from, buckets, polls), polls)
    expect(summary([])).toBe('No polls in the last hour')
    expect(summary([bucket('2026-01-01T12:04:00.000Z', 3, 0)])).toBe('No failures in the last hour')
    expect(summary([bucket('2026-01-01T12:04:00.000Z', 3, 1), bucket('2026-01-01T12:03:00.000Z', 0, 2)])).toBe(
      'Failures in 2 of the last 60 minutes',
    )
  })
})
