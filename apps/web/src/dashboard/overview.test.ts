import type { CollectorStats, HealthIssue, Junction, StreamStats } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { countIssues, currentIssues, summarizeAreas } from './overview'

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
  it('lists the issues of every area newest first, with the never-seen ones last', () => {
    const issues = currentIssues({
      collectors: collectorStats(
        [issue('never', null), issue('old', '2026-01-01T10:00:00.000Z', 'error')],
        [issue('sensor', '2026-01-01T12:00:00.000Z')],
      ),
      streams: streamStats([issue('stream', '2026-01-01T11:00:00.000Z', 'error')]),
      junctions: [],
    })
    expect(issues.map((found) => found.id)).toEqual(['sensor', 'stream', 'old', 'never'])
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

  it('counts running junctions as active, and junctions are always healthy', () => {
    const junction: Omit<Junction, 'id' | 'name' | 'status'> = {
      autoStart: false,
      collectorIds: [],
      targets: [],
      lastError: null,
      health: { state: 'stopped', since: '', reason: null, consecutiveFailures: 0 },
      createdAt: '',
      updatedAt: '',
    }
    const [junctions] = summarizeAreas({
      collectors: collectorStats([]),
      streams: streamStats([]),
      junctions: [
        { ...junction, id: 'a', name: 'a', status: 'Running' },
        { ...junction, id: 'b', name: 'b', status: 'Idle', lastError: 'boom' },
      ],
    })
    expect(junctions).toMatchObject({
      active: 1,
      total: 2,
      status: 'All Healthy',
      severity: 'success',
      isLoading: false,
    })
  })
})
