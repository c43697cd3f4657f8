import type { CollectorStats, HealthIssue, Junction, StreamStats } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { countIssues, currentIssues, isUnconfigured, junctionFingerprint, summarizeAreas } from './overview'

const issue = (id: string, timestamp: string | null, type: HealthIssue['type'] = 'warning'): HealthIssue => ({
  id,
  type,
  title: id,
  description: id,
  timestamp,
  area: 'Collectors',
})

const health = { status: 'All Healthy', severity: 'success' } as const

function collectorStats(collectorIssues: HealthIssue[], sensorIssues: HealthIssue[] = []): CollectorStats {
  return {
    collectors: {
      active: 2,
      total: 3,
      failing: 0,
      degraded: 0,
      health,
      hasIssues: collectorIssues.length > 0,
      details: collectorIssues,
      breakdown: { locked: 0, failedFetch: 0, neverFetched: 0, healthy: 3, errors: 0, warnings: 0 },
    },
    sensors: {
      active: 4,
      total: 6,
      health,
      hasIssues: sensorIssues.length > 0,
      details: sensorIssues,
      breakdown: { lost: 0, new: 0, healthy: 6 },
    },
  }
}

function streamStats(details: HealthIssue[]): StreamStats {
  return {
    active: 1,
    total: 1,
    inactive: 0,
    slow: 0,
    failing: 0,
    degraded: 0,
    health,
    hasIssues: details.length > 0,
    details,
    breakdown: { byType: { HTTP: 0, MQTT: 0, COM: 0, WebSocket: 0, Virtual: 1 }, errors: 0, warnings: 0, healthy: 1 },
  }
}

describe('dashboard overview', () => {
  it('lists the issues of every area worst first, then newest first, with the never-seen ones last', () => {
    const issues = currentIssues({
      collectors: collectorStats(
        [issue('never', null), issue('old', '2026-01-01T10:00:00.000Z', 'error')],
        [issue('sensor', '2026-01-01T12:00:00.000Z')],
      ),
      streams: streamStats([issue('stream', '2026-01-01T11:00:00.000Z', 'error')]),
      junctions: [],
    })
    expect(issues.map((found) => found.id)).toEqual(['stream', 'old', 'sensor', 'never'])
    expect(countIssues(issues)).toEqual({ errors: 2, warnings: 2 })
  })

  it('shows missing statistics as 0 active and Unknown, and keeps the areas it has', () => {
    const areas = summarizeAreas({ collectors: undefined, streams: streamStats([]), junctions: undefined })
    expect(areas.map((area) => [area.area, area.active, area.total, area.status, area.severity])).toEqual([
      ['Junctions', 0, null, 'Unknown', 'unknown'],
      ['Collectors', 0, null, 'Unknown', 'unknown'],
      ['Streams', 1, 1, 'All Healthy', 'success'],
      ['Sensors', 0, null, 'Unknown', 'unknown'],
    ])
    expect(currentIssues({ collectors: undefined, streams: undefined, junctions: undefined })).toEqual([])
  })

  it('counts running junctions as active, and their failing and degraded ones', () => {
    const junction = (name: string, status: Junction['status'], state: Junction['health']['state']): Junction => ({
      id: name,
      name,
      status,
      autoStart: false,
      collectorIds: [],
      targets: [],
      lastError: null,
      health: { state, since: '', reason: null, consecutiveFailures: 0 },
      createdAt: '',
      updatedAt: '',
    })
    const junctionsCard = (junctions: Junction[]) =>
      summarizeAreas({ collectors: collectorStats([]), streams: streamStats([]), junctions })[0]

    expect(junctionsCard([junction('a', 'Running', 'healthy'), junction('b', 'Idle', 'stopped')])).toMatchObject({
      active: 1,
      total: 2,
      failing: 0,
      status: 'All Healthy',
      severity: 'success',
      isLoading: false,
    })
    expect(
      junctionsCard([
        junction('a', 'Running', 'failing'),
        junction('b', 'Running', 'degraded'),
        junction('c', 'Idle', 'stopped'),
      ]),
    ).toMatchObject({ active: 2, total: 3, failing: 1, degraded: 1, status: '1 Failing', severity: 'error' })
    expect(junctionsCard([junction('a', 'Running', 'degraded')])).toMatchObject({
      status: '1 Degraded',
      severity: 'warning',
    })
  })

  it('carries the failing and degraded counts of collectors and streams to their cards', () => {
    const collectors = collectorStats([])
    collectors.collectors.failing = 2
    collectors.collectors.degraded = 1
    const [, collectorsCard, streamsCard, sensorsCard] = summarizeAreas({
      collectors,
      streams: { ...streamStats([]), failing: 1 },
      junctions: [],
    })
    expect([collectorsCard?.failing, collectorsCard?.degraded]).toEqual([2, 1])
    expect(streamsCard?.failing).toBe(1)
    expect(sensorsCard?.failing).toBe(0)
  })

  it('knows a relay with nothing configured only once every list has loaded empty', () => {
    const empty = collectorStats([])
    empty.collectors.total = 0
    expect(isUnconfigured({ collectors: empty, streams: undefined, junctions: [] })).toBe(true)
    expect(isUnconfigured({ collectors: empty, streams: streamStats([]), junctions: undefined })).toBe(false)
    expect(isUnconfigured({ collectors: undefined, streams: streamStats([]), junctions: [] })).toBe(false)
    expect(isUnconfigured({ collectors: collectorStats([]), streams: streamStats([]), junctions: [] })).toBe(false)
  })

  it('changes the junction fingerprint when what running junctions drive changes', () => {
    const before = junctionFingerprint({ collectors: collectorStats([]), streams: streamStats([]) })
    const failing = collectorStats([])
    failing.collectors.failing = 1
    expect(junctionFingerprint({ collectors: failing, streams: streamStats([]) })).not.toBe(before)
    expect(junctionFingerprint({ collectors: collectorStats([]), streams: streamStats([]) })).toBe(before)
    expect(junctionFingerprint({ collectors: undefined, streams: streamStats([]) })).toBeUndefined()
  })
})
