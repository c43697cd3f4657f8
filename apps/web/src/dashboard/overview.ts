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
  total: null,
  status: 'Unknown',
  severity: 'unknown',
  isLoading: true,
})

type AreaStats = { active: number; total: number; health: AreaHealth }

const known = (area: HealthArea, stats: AreaStats): AreaSummary => ({
  area,
  active: stats.active,
  total: stats.total,
  status: stats.health.status,
  severity: stats.health.severity,
  isLoading: false,
})

/** The four area cards, in display order. */
export function summarizeAreas({ collectors, streams, junctions }: OverviewData): AreaSummary[] {
  const junctionStats: AreaStats | undefined = junctions && {
    active: junctions.filter((junction) => junction.status === 'Running').length,
    total: junctions.length,
    // Junctions have no error or warning conditions.
    health: { status: 'All Healthy', severity: 'success' },
  }
  return [
    junctionStats ? known('Junctions', junctionStats) : missing('Junctions'),
    collectors ? known('Collectors', collectors.collectors) : missing('Collectors'),
    streams ? known('Streams', streams) : missing('Streams'),
    collectors ? known('Sensors', collectors.sensors) : missing('Sensors'),
  ]
}

/** Every issue the relay reports, newest first; issues that never happened (no timestamp) go last. */
export function currentIssues({ collectors, streams }: OverviewData): HealthIssue[] {
  const issues = [
    ...(collectors?.collectors.details ?? []),
    ...(collectors?.sensors.details ?? []),
    ...(streams?.details ?? []),
  ]
  return issues.sort((a, b) => timeOf(b) - timeOf(a))
}

function timeOf(issue: HealthIssue): number {
  return issue.timestamp === null ? Number.NEGATIVE_INFINITY : Date.parse(issue.timestamp)
}

export function countIssues(issues: readonly HealthIssue[]): { errors: number; warnings: number } {
  const errors = issues.filter((issue) => issue.type === 'error').length
  return { errors, warnings: issues.length - errors }
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}
