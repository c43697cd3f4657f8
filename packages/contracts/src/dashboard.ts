import { type Static, Type } from 'typebox'
import { MINUTE, SECOND } from './time.js'

/** Fixed health thresholds of the dashboard. Comparisons are strict (greater than). */
export const healthThresholds = {
  ERROR_NO_DATA_MINUTES: 5,
  WARNING_NO_DATA_SECONDS: 30,
  SENSOR_ERROR_LOST_THRESHOLD: 5,
  SENSOR_WARNING_LOST_THRESHOLD: 1,
} as const

export const streamSilence = {
  error: healthThresholds.ERROR_NO_DATA_MINUTES * MINUTE,
  warning: healthThresholds.WARNING_NO_DATA_SECONDS * SECOND,
} as const

export const healthSeverities = ['success', 'warning', 'error'] as const
export type HealthSeverity = (typeof healthSeverities)[number]

export const healthAreas = ['Collectors', 'Streams', 'Sensors', 'Junctions'] as const
export type HealthArea = (typeof healthAreas)[number]

export const collectorTypes = ['Host', 'GenericAPI', 'MQTT', 'Virtual', 'EventEngine'] as const
export type CollectorType = (typeof collectorTypes)[number]
/** Internal collectors that every statistic leaves out. */
export const excludedCollectorType = 'EventEngine' satisfies CollectorType

export const streamTypes = ['HTTP', 'MQTT', 'COM', 'WebSocket', 'Virtual'] as const
export type StreamType = (typeof streamTypes)[number]

export const dashboardPolling = {
  interval: 5 * SECOND,
  expandedStorageKey: 'dashboard_overview_expanded',
} as const

// ---------------------------------------------------------------------------------------------
// Wire schemas

export const HealthIssue = Type.Object({
  id: Type.String(),
  type: Type.Enum(['error', 'warning']),
  title: Type.String(),
  description: Type.String(),
  /** When the condition was last observed (last fetch or last send); null when it never happened. */
  timestamp: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  area: Type.Enum(healthAreas),
  collectorId: Type.Optional(Type.String()),
  lostCount: Type.Optional(Type.Integer()),
})
export type HealthIssue = Static<typeof HealthIssue>

export const AreaHealth = Type.Object({
  /** "All Healthy", "N Errors" or "N Warnings". */
  status: Type.String(),
  severity: Type.Enum(healthSeverities),
})
export type AreaHealth = Static<typeof AreaHealth>

const Count = Type.Integer({ minimum: 0 })

export const CollectorStats = Type.Object({
  collectors: Type.Object({
    active: Count,
    total: Count,
    health: AreaHealth,
    hasIssues: Type.Boolean(),
    details: Type.Array(HealthIssue),
    breakdown: Type.Object({
      locked: Count,
      failedFetch: Count,
      neverFetched: Count,
      healthy: Count,
      errors: Count,
      warnings: Count,
    }),
  }),
  sensors: Type.Object({
    active: Count,
    total: Count,
    health: AreaHealth,
    hasIssues: Type.Boolean(),
    details: Type.Array(HealthIssue),
    breakdown: Type.Object({ lost: Count, new: Count, healthy: Count }),
  }),
})
export type CollectorStats = Static<typeof CollectorStats>

export const StreamStats = Type.Object({
  active: Count,
  total: Count,
  inactive: Count,
  slow: Count,
  health: AreaHealth,
  hasIssues: Type.Boolean(),
  details: Type.Array(HealthIssue),
  breakdown: Type.Object({
    byType: Type.Object(
      Object.fromEntries(streamTypes.map((type) => [type, Count])) as Record<StreamType, typeof Count>,
    ),
    errors: Count,
    warnings: Count,
    healthy: Count,
  }),
})
export type StreamStats = Static<typeof StreamStats>

export const dashboardRoutes = {
  collectorStats: { method: 'GET', url: '/api/collectors/stats', schema: { response: { 200: CollectorStats } } },
  streamStats: { method: 'GET', url: '/api/connections/streams/stats', schema: { response: { 200: StreamStats } } },
} as const
