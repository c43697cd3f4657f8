import { type Static, Type } from 'typebox'
import { dashboardUrls, healthAreas, healthSeverities, type StreamType, streamTypes } from './dashboard.plain.js'
import { routesOf } from './endpoint.js'
import { AcknowledgedMark, SilencedMark } from './health-alerts.js'

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
  /** The item the warning is about (`collector:<id>`, `stream:<id>`): what acknowledging it names. */
  item: Type.Optional(Type.String()),
  /** Seen, until the item recovers or starts failing anew; the warning stays listed. */
  acknowledged: Type.Optional(AcknowledgedMark),
  /** The item, or its area, raises no notifications until then. */
  silenced: Type.Optional(SilencedMark),
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
    /** Polling operations running now (EventEngine left out). */
    active: Count,
    /** Of those, how many are failing and how many degraded: "6 polling · 2 failing". */
    failing: Count,
    degraded: Count,
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
  /** Running streams whose sends are failing, and degraded ones (a failed send short of failing). */
  failing: Count,
  degraded: Count,
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

const dashboardSchemas = {
  collectorStats: { response: { 200: CollectorStats } },
  streamStats: { response: { 200: StreamStats } },
} as const
export type DashboardSchemas = typeof dashboardSchemas

export const dashboardRoutes = routesOf(dashboardUrls, dashboardSchemas)
