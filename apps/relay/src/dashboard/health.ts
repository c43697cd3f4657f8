import {
  type AreaHealth,
  type CollectorStats,
  type CollectorType,
  excludedCollectorType,
  type HealthIssue,
  healthThresholds,
  type StreamStats,
  type StreamType,
  streamSilence,
  streamTypes,
} from '@relay/contracts'

/** The collector fields the health rules read. */
export type CollectorHealthInput = {
  id: string
  name: string
  collectorType: CollectorType
  lastFetchTime: string | null
  lastFetchSuccessful: boolean
  lastFetchErrorMessage: string | null
  /** The collector's access token is protected by a user password. */
  externalAccessToken: boolean
  /** The password was given since the relay started, so the token can be used. */
  unlocked: boolean
  lastFetchTotalSensors: number
  lastFetchLostSensors: number
  lastFetchNewSensors: number
}

/** A running stream, as the health rules see it. */
export type StreamHealthInput = {
  id: string
  name: string
  type: StreamType
  lastSentTime: string | null
  deviceName: string | null
  screenId: string | null
}

/** "All Healthy", "2 Errors", "1 Warning": errors first, since they are what needs attention. */
export function areaHealth(errors: number, warnings: number): AreaHealth {
  if (errors > 0) {
    return { status: plural(errors, 'Error'), severity: 'error' }
  }
  if (warnings > 0) {
    return { status: plural(warnings, 'Warning'), severity: 'warning' }
  }
  return { status: 'All Healthy', severity: 'success' }
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}

const countBy = (issues: HealthIssue[], type: HealthIssue['type']) =>
  issues.filter((issue) => issue.type === type).length

/**
 * Collectors known to be healthy, counted by the database instead of listed: fetched successfully,
 * no locked token, no lost sensors, not EventEngine. With thousands of collectors only the few with
 * something to report need to be read one by one.
 */
export type HealthyCollectors = { count: number; totalSensors: number; newSensors: number }

const noHealthyCollectors: HealthyCollectors = { count: 0, totalSensors: 0, newSensors: 0 }

/** Polling operations running now, and how many of them are failing or degraded (EventEngine left out). */
export type PollingHealth = { active: number; failing: number; degraded: number }

/** Running streams that are failing or degraded. */
export type SendingHealth = { failing: number; degraded: number }

const notPolling: PollingHealth = { active: 0, failing: 0, degraded: 0 }

/**
 * Collector and sensor health. EventEngine collectors are internal and left out of everything,
 * `polling` included.
 */
export function collectorStats(
  all: readonly CollectorHealthInput[],
  polling: PollingHealth = notPolling,
  healthy: HealthyCollectors = noHealthyCollectors,
): CollectorStats {
  const collectors = all.filter((collector) => collector.collectorType !== excludedCollectorType)
  const issues: HealthIssue[] = []
  const breakdown = { locked: 0, failedFetch: 0, neverFetched: 0, healthy: healthy.count }

  for (const collector of collectors) {
    const before = issues.length
    const locked = collector.externalAccessToken && !collector.unlocked
    if (locked) {
      breakdown.locked++
      issues.push(collectorIssue(collector, 'warning', 'locked', 'Locked', 'Requires password to unlock'))
    }
    if (collector.lastFetchTime === null) {
      // Never fetched is a warning, not a failed fetch: there has been no fetch to fail.
      breakdown.neverFetched++
      issues.push(collectorIssue(collector, 'warning', 'never-fetched', 'No data yet', 'Never fetched data'))
    } else if (!collector.lastFetchSuccessful) {
      breakdown.failedFetch++
      const description = collector.lastFetchErrorMessage || 'The last fetch failed'
      issues.push(collectorIssue(collector, 'error', 'fetch-failed', 'Fetch failed', description))
    }
    if (issues.length === before) {
      breakdown.healthy++
    }
  }

  const reporting = collectors.filter((collector) => collector.lastFetchTime !== null)
  const sum = (
    list: readonly CollectorHealthInput[],
    field: 'lastFetchTotalSensors' | 'lastFetchLostSensors' | 'lastFetchNewSensors',
  ) => list.reduce((total, collector) => total + collector[field], 0)
  const totalSensors = sum(collectors, 'lastFetchTotalSensors') + healthy.totalSensors
  const lost = sum(collectors, 'lastFetchLostSensors')
  const sensorSeverity =
    lost >= healthThresholds.SENSOR_ERROR_LOST_THRESHOLD
      ? 'error'
      : lost >= healthThresholds.SENSOR_WARNING_LOST_THRESHOLD
        ? 'warning'
        : undefined
  const sensorIssues: HealthIssue[] = sensorSeverity
    ? collectors
        .filter((collector) => collector.lastFetchLostSensors > 0)
        .map((collector) => ({
          id: `sensors-lost-${collector.id}`,
          type: sensorSeverity,
          title: `${collector.name}: ${plural(collector.lastFetchLostSensors, 'sensor')} lost`,
          description: `${plural(collector.lastFetchLostSensors, 'sensor')} no longer reported by ${collector.name}`,
          timestamp: collector.lastFetchTime,
          area: 'Sensors' as const,
          collectorId: collector.id,
          lostCount: collector.lastFetchLostSensors,
          item: `collector:${collector.id}`,
        }))
    : []
  const errors = countBy(issues, 'error')
  const warnings = countBy(issues, 'warning')
  const sensorErrors = countBy(sensorIssues, 'error')

  return {
    collectors: {
      active: polling.active,
      failing: polling.failing,
      degraded: polling.degraded,
      total: collectors.length + healthy.count,
      health: areaHealth(errors, warnings),
      hasIssues: issues.length > 0,
      details: issues,
      breakdown: { ...breakdown, errors, warnings },
    },
    sensors: {
      active:
        sum(
          reporting.filter((collector) => collector.lastFetchSuccessful),
          'lastFetchTotalSensors',
        ) + healthy.totalSensors,
      total: totalSensors,
      health: areaHealth(sensorErrors, sensorIssues.length - sensorErrors),
      hasIssues: sensorIssues.length > 0,
      details: sensorIssues,
      breakdown: {
        lost,
        new: sum(collectors, 'lastFetchNewSensors') + healthy.newSensors,
        healthy: Math.max(totalSensors - lost, 0),
      },
    },
  }
}

function collectorIssue(
  collector: CollectorHealthInput,
  type: HealthIssue['type'],
  key: string,
  title: string,
  description: string,
): HealthIssue {
  return {
    id: `collector-${key}-${collector.id}`,
    type,
    title: `${collector.name}: ${title}`,
    description,
    timestamp: collector.lastFetchTime,
    area: 'Collectors',
    item: `collector:${collector.id}`,
  }
}

/** Health of the running streams: silent over 30 s is a warning, over 5 minutes an error. */
export function streamStats(
  running: readonly StreamHealthInput[],
  now: Date,
  sending: SendingHealth = { failing: 0, degraded: 0 },
): StreamStats {
  const issues: HealthIssue[] = []
  const byType = Object.fromEntries(streamTypes.map((type) => [type, 0])) as Record<StreamType, number>
  let inactive = 0
  let slow = 0

  for (const stream of running) {
    byType[stream.type]++
    const target = stream.deviceName ? ` to ${stream.deviceName}` : ''
    const issue = (type: HealthIssue['type'], title: string, description: string): HealthIssue => ({
      id: `stream-${stream.id}`,
      type,
      title: `${stream.name}: ${title}`,
      description,
      timestamp: stream.lastSentTime,
      area: 'Streams',
      item: `stream:${stream.id}`,
    })
    if (stream.lastSentTime === null) {
      issues.push(issue('warning', 'Never sent', `No data has been sent${target} yet`))
      continue
    }
    const silence = now.getTime() - Date.parse(stream.lastSentTime)
    if (silence > streamSilence.warning) {
      slow++
    }
    if (silence > streamSilence.error) {
      inactive++
      issues.push(issue('error', 'No data', `Nothing sent${target} for ${describeSilence(silence)}`))
    } else if (silence > streamSilence.warning) {
      issues.push(issue('warning', 'Slow', `Nothing sent${target} for ${describeSilence(silence)}`))
    }
  }

  const errors = countBy(issues, 'error')
  const warnings = countBy(issues, 'warning')
  return {
    active: running.length,
    failing: sending.failing,
    degraded: sending.degraded,
    total: running.length,
    inactive,
    slow,
    health: areaHealth(errors, warnings),
    hasIssues: issues.length > 0,
    details: issues,
    breakdown: { byType, errors, warnings, healthy: running.length - errors - warnings },
  }
}

function describeSilence(ms: number): string {
  const seconds = Math.floor(ms / 1000)
  return seconds < 120 ? `${seconds} s` : `${Math.floor(seconds / 60)} min`
}
