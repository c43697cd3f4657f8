import type { CollectorStats, HealthIssue, StreamStats } from '@relay/contracts'
import type { HealthAlerts } from './service.js'

type Marks = Pick<HealthAlerts, 'marksOf' | 'version' | 'nextEnd'>
type Clock = { now(): Date }

/** Each issue with the marks of its item and area; the same array when none applies. */
function markedIssues(alerts: Marks, issues: HealthIssue[]): HealthIssue[] {
  let changed = false
  const marked = issues.map((issue) => {
    const marks = alerts.marksOf(issue.item, issue.area)
    if (marks.acknowledged === undefined && marks.silenced === undefined) {
      return issue
    }
    changed = true
    return { ...issue, ...marks }
  })
  return changed ? marked : issues
}

/**
 * Marks the issues of a statistics object, keeping the last result while neither the statistics nor
 * the marks changed: the dashboard route reuses a reply's serialized form as long as it gets the same
 * object, and at thousands of collectors that form is large.
 */
function remembered<T extends object>(alerts: Marks, clock: Clock, mark: (stats: T) => T) {
  let last: { of: T; version: number; validUntil: number; marked: T } | undefined
  return (stats: T): T => {
    const at = clock.now().getTime()
    if (last?.of === stats && last.version === alerts.version() && at < last.validUntil) {
      return last.marked
    }
    last = { of: stats, version: alerts.version(), validUntil: alerts.nextEnd(), marked: mark(stats) }
    return last.marked
  }
}

export function collectorStatsMarker(alerts: Marks, clock: Clock) {
  return remembered<CollectorStats>(alerts, clock, (stats) => {
    const collectors = markedIssues(alerts, stats.collectors.details)
    const sensors = markedIssues(alerts, stats.sensors.details)
    if (collectors === stats.collectors.details && sensors === stats.sensors.details) {
      return stats
    }
    return {
      collectors: { ...stats.collectors, details: collectors },
      sensors: { ...stats.sensors, details: sensors },
    }
  })
}

export function markStreamStats(alerts: Marks, stats: StreamStats): StreamStats {
  const details = markedIssues(alerts, stats.details)
  return details === stats.details ? stats : { ...stats, details }
}
