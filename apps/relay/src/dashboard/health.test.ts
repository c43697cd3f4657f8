import { CollectorStats, StreamStats } from '@relay/contracts'
import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import { type CollectorHealthInput, collectorStats, type StreamHealthInput, streamStats } from './health.js'

const now = new Date('2026-03-01T12:00:00.000Z')
const ago = (ms: number) => new Date(now.getTime() - ms).toISOString()

function collector(overrides: Partial<CollectorHealthInput> = {}): CollectorHealthInput {
  return {
    id: 'c1',
    name: 'Host',
    collectorType: 'Host',
    lastFetchTime: ago(1000),
    lastFetchSuccessful: true,
    lastFetchErrorMessage: null,
    externalAccessToken: false,
    unlocked: false,
    lastFetchTotalSensors: 10,
    lastFetchLostSensors: 0,
    lastFetchNewSensors: 0,
    ...overrides,
  }
}

function stream(lastSentTime: string | null, overrides: Partial<StreamHealthInput> = {}): StreamHealthInput {
  return { id: 's1', name: 'Screen', type: 'HTTP', lastSentTime, deviceName: 'Wall', screenId: '1', ...overrides }
}

describe('stream health', () => {
  it.each([
    ['29 s', 29_000, 'success', 0, 0],
    ['30 s (strict threshold: still healthy)', 30_000, 'success', 0, 0],
    ['31 s', 31_000, 'warning', 1, 0],
    ['4:59', 299_000, 'warning', 1, 0],
    ['5:00 (strict threshold: still a warning)', 300_000, 'warning', 1, 0],
    ['5:01', 301_000, 'error', 1, 1],
  ])('silent for %s is %s', (_, silence, severity, slow, inactive) => {
    const stats = streamStats([stream(ago(silence))], now)
    expect(stats.health.severity).toBe(severity)
    expect({ slow: stats.slow, inactive: stats.inactive }).toEqual({ slow, inactive })
    expect(stats.hasIssues).toBe(severity !== 'success')
    expect(Value.Check(StreamStats, stats)).toBe(true)
  })

  it('never sent is a warning', () => {
    const stats = streamStats([stream(null)], now)
    expect(stats.health).toEqual({ status: '1 Warning', severity: 'warning' })
    expect(stats.details[0]).toMatchObject({ type: 'warning', area: 'Streams', timestamp: null })
  })

  it('counts running streams by type, with errors ahead of warnings in the status', () => {
    const stats = streamStats(
      [
        stream(ago(1000), { id: 'a', type: 'MQTT' }),
        stream(ago(400_000), { id: 'b', type: 'MQTT' }),
        stream(ago(60_000), { id: 'c', type: 'COM' }),
        stream(null, { id: 'd', type: 'WebSocket' }),
      ],
      now,
    )
    expect(stats).toMatchObject({ active: 4, total: 4, inactive: 1, slow: 2 })
    expect(stats.breakdown).toEqual({
      byType: { HTTP: 0, MQTT: 2, COM: 1, WebSocket: 1, Virtual: 0 },
      errors: 1,
      warnings: 2,
      healthy: 1,
    })
    expect(stats.health).toEqual({ status: '1 Error', severity: 'error' })
  })

  it('is healthy with no running streams', () => {
    expect(streamStats([], now)).toMatchObject({ active: 0, health: { status: 'All Healthy', severity: 'success' } })
  })
})

/** N polling operations, none failing or degraded. */
const polling = (active: number) => ({ active, failing: 0, degraded: 0 })

describe('collector health', () => {
  it('is healthy when every fetch succeeded', () => {
    const stats = collectorStats([collector()], polling(1))
    expect(Value.Check(CollectorStats, stats)).toBe(true)
    expect(stats.collectors).toMatchObject({
      active: 1,
      total: 1,
      health: { status: 'All Healthy', severity: 'success' },
      hasIssues: false,
      breakdown: { locked: 0, failedFetch: 0, neverFetched: 0, healthy: 1, errors: 0, warnings: 0 },
    })
  })

  it('a failed fetch is an error described by its message', () => {
    const stats = collectorStats(
      [collector({ lastFetchSuccessful: false, lastFetchErrorMessage: 'ECONNREFUSED' })],
      polling(1),
    )
    expect(stats.collectors.health).toEqual({ status: '1 Error', severity: 'error' })
    expect(stats.collectors.details).toEqual([
      expect.objectContaining({ type: 'error', description: 'ECONNREFUSED', area: 'Collectors' }),
    ])
    expect(stats.collectors.breakdown.failedFetch).toBe(1)
  })

  it('never fetched is a warning', () => {
    const stats = collectorStats([collector({ lastFetchTime: null, lastFetchSuccessful: false })], polling(0))
    expect(stats.collectors.health.severity).toBe('warning')
    expect(stats.collectors.details).toEqual([
      expect.objectContaining({ type: 'warning', description: 'Never fetched data' }),
    ])
    expect(stats.collectors.breakdown).toMatchObject({ neverFetched: 1, failedFetch: 0, healthy: 0 })
  })

  it('a locked collector is a warning until unlocked', () => {
    const locked = collectorStats([collector({ externalAccessToken: true, unlocked: false })], polling(0))
    expect(locked.collectors.details).toEqual([
      expect.objectContaining({ type: 'warning', description: 'Requires password to unlock' }),
    ])
    expect(locked.collectors.breakdown.locked).toBe(1)
    const unlocked = collectorStats([collector({ externalAccessToken: true, unlocked: true })], polling(1))
    expect(unlocked.collectors.hasIssues).toBe(false)
  })

  it('leaves EventEngine collectors out of every figure', () => {
    const engine = collector({
      id: 'e',
      collectorType: 'EventEngine',
      lastFetchSuccessful: false,
      lastFetchTotalSensors: 100,
      lastFetchLostSensors: 50,
      lastFetchNewSensors: 7,
    })
    const stats = collectorStats([collector(), engine], polling(1))
    expect(stats.collectors.total).toBe(1)
    expect(stats.collectors.hasIssues).toBe(false)
    expect(stats.sensors).toMatchObject({ total: 10, active: 10, breakdown: { lost: 0, new: 0, healthy: 10 } })
  })

  it.each([
    [0, 'success', 'All Healthy'],
    [1, 'warning', '1 Warning'],
    [4, 'warning', '2 Warnings'],
    [5, 'error', '2 Errors'],
  ])('%i lost sensors across collectors is %s', (lost, severity, status) => {
    const a = Math.ceil(lost / 2)
    const stats = collectorStats(
      [
        collector({ id: 'a', lastFetchLostSensors: a, lastFetchNewSensors: 1 }),
        collector({ id: 'b', name: 'API', lastFetchLostSensors: lost - a, lastFetchNewSensors: 2 }),
      ],
      polling(2),
    )
    expect(stats.sensors.health).toEqual({ status, severity })
    expect(stats.sensors.breakdown).toEqual({ lost, new: 3, healthy: 20 - lost })
    for (const issue of stats.sensors.details) {
      expect(issue).toMatchObject({
        area: 'Sensors',
        type: severity,
        collectorId: expect.any(String),
        lostCount: expect.any(Number),
      })
    }
    expect(stats.sensors.details.reduce((sum, issue) => sum + (issue.lostCount ?? 0), 0)).toBe(lost)
  })

  it('counts active sensors only from collectors whose last fetch succeeded', () => {
    const stats = collectorStats(
      [
        collector({ id: 'a', lastFetchTotalSensors: 4 }),
        collector({ id: 'b', lastFetchSuccessful: false, lastFetchTotalSensors: 6 }),
      ],
      polling(2),
    )
    expect(stats.sensors).toMatchObject({ active: 4, total: 10 })
  })
})
