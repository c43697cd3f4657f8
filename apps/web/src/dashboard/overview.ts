import type {
  AreaHealth,
  CollectorStats,
  HealthArea,
  HealthIssue,
  HealthSeverity,
  Junction,
  StreamStats,
} from '@relay/contracts'

/** A health severity, or `unknown` while an area's statistics are missing. */
export type CardSeverity = HealthSeverity | 'unknown'

export type AreaSummary = {
  area: HealthArea
  active: number
  /** Of the active ones, how many are failing and how many degraded (0 for sensors). */
  failing: number
  degraded: number
  /** Null while the statistics are missing. */
  total: number | null
  status: string
  severity: CardSeverity
  /** The statistics are missing: not fetched yet, or the last fetch failed. */
  isLoading: boolean
}

/** What the dashboard has right now; `undefined` is missing (still loading, or the last fetch failed). */
export type OverviewData = {
  collectors: CollectorStats | undefined
  streams: StreamStats | undefined
  junctions: readonly Junction[] | undefined
}

const missing = (area: HealthArea): AreaSummary => ({
  area,
  active: 0,
  failing: 0,
  degraded: 0,
  total: null,
  status: 'Unknown',
  severity: 'unknown',
  isLoading: true,
})

type AreaStats = { active: number; total: number; health: AreaHealth; failing?: number; degraded?: number }

const known = (area: HealthArea, stats: AreaStats): AreaSummary => ({
  area,
  active: stats.active,
  failing: stats.failing ?? 0,
  degraded: stats.degraded ?? 0,
  total: stats.total,
  status: stats.health.status,
  severity: stats.health.severity,
  isLoading: false,
})

/** The four area cards, in display order. */
export function summarizeAreas({ collectors, streams, junctions }: OverviewData): AreaSummary[] {
  const junctionStats = junctions && summarizeJunctions(junctions)
  return [
    junctionStats ? known('Junctions', junctionStats) : missing('Junctions'),
    collectors ? known('Collectors', collectors.collectors) : missing('Collectors'),
    streams ? known('Streams', streams) : missing('Streams'),
    collectors ? known('Sensors', collectors.sensors) : missing('Sensors'),
  ]
}

/** A junction's health is the worst of its running parts, so the card counts failing and degraded ones. */
function summarizeJunctions(junctions: readonly Junction[]): AreaStats {
  const inState = (state: Junction['health']['state']) =>
    junctions.filter((junction) => junction.health.state === state).length
  const failing = inState('failing')
  const degraded = inState('degraded')
  const health: AreaHealth =
    failing > 0
      ? { status: `${failing} Failing`, severity: 'error' }
      : degraded > 0
        ? { status: `${degraded} Degraded`, severity: 'warning' }
        : { status: 'All Healthy', severity: 'success' }
  return {
    active: junctions.filter((junction) => junction.status === 'Running').length,
    total: junctions.length,
    failing,
    degraded,
    health,
  }
}

/**
 * Every issue the relay reports, worst first: errors before warnings, each newest first, and issues
 * that never happened (no timestamp) last among their kind.
 */
export function currentIssues({ collectors, streams }: OverviewData): HealthIssue[] {
  const issues = [
    ...(collectors?.collectors.details ?? []),
    ...(collectors?.sensors.details ?? []),
    ...(streams?.details ?? []),
  ]
  return issues.sort((a, b) => rankOf(a) - rankOf(b) || timeOf(b) - timeOf(a))
}

const rankOf = (issue: HealthIssue) => (issue.type === 'error' ? 0 : 1)

function timeOf(issue: HealthIssue): number {
  return issue.timestamp === null ? Number.NEGATIVE_INFINITY : Date.parse(issue.timestamp)
}

/**
 * A relay with nothing configured yet, known for sure once both lists have loaded: no collectors, and
 * so no junctions (a junction needs one). Streams may exist, but nothing sends to them yet, and adding
 * a collector is the next step either way.
 */
export function isUnconfigured({ collectors, junctions }: OverviewData): boolean {
  return collectors?.collectors.total === 0 && junctions?.length === 0
}

/**
 * What the junction list depends on, read from the statistics: a junction that starts, stops, fails
 * or recovers changes the collectors and streams it runs, so a change here means the list is stale.
 */
export function junctionFingerprint({ collectors, streams }: Omit<OverviewData, 'junctions'>): string | undefined {
  if (!collectors || !streams) {
    return undefined
  }
  const { active, failing, degraded } = collectors.collectors
  return [active, failing, degraded, streams.active, streams.failing, streams.degraded].join(',')
}

export function countIssues(issues: readonly HealthIssue[]): { errors: number; warnings: number } {
  const errors = issues.filter((issue) => issue.type === 'error').length
  return { errors, warnings: issues.length - errors }
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}
