import { type Static, Type } from 'typebox'
import { routesOf } from './endpoint.js'
import { healthUrls } from './health.plain.js'

export const DatabaseHealth = Type.Object({
  ok: Type.Boolean(),
  driver: Type.Union([Type.Literal('sqlite'), Type.Literal('pglite'), Type.Literal('postgres')]),
  /** Round trip of a trivial query, milliseconds. */
  latencyMs: Type.Number(),
  error: Type.Optional(Type.String()),
})
export type DatabaseHealth = Static<typeof DatabaseHealth>

const healthFields = {
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  uptimeSeconds: Type.Number(),
  db: DatabaseHealth,
}

export const CloudHealth = Type.Object(healthFields)
export type CloudHealth = Static<typeof CloudHealth>

export const RelayHealth = Type.Object({ ...healthFields, backendId: Type.String({ format: 'uuid' }) })
export type RelayHealth = Static<typeof RelayHealth>

/** One dependency's state: `ok`, `not configured` (optional and absent), or `failed: <short reason>`. */
export const DependencyCheck = Type.String({ pattern: '^(ok|not configured|failed: .+)$' })
export type DependencyCheck = Static<typeof DependencyCheck>

export const ReadinessChecks = Type.Object({
  database: DependencyCheck,
  redis: DependencyCheck,
  objectStore: DependencyCheck,
})
export type ReadinessChecks = Static<typeof ReadinessChecks>

export const CloudReady = Type.Object({ status: Type.Literal('ready'), checks: ReadinessChecks })
export type CloudReady = Static<typeof CloudReady>

/** An error body (`success`, `error`, `code: 'UNAVAILABLE'`) that also names each dependency's state. */
export const CloudNotReady = Type.Object({
  success: Type.Literal(false),
  error: Type.String(),
  code: Type.Literal('UNAVAILABLE'),
  status: Type.Literal('not ready'),
  checks: ReadinessChecks,
})
export type CloudNotReady = Static<typeof CloudNotReady>

const healthSchemas = {
  cloud: { response: { 200: CloudHealth } },
  cloudReadiness: { response: { 200: CloudReady, 503: CloudNotReady } },
  relay: { response: { 200: RelayHealth, 503: RelayHealth } },
} as const
export type HealthSchemas = typeof healthSchemas
export const healthRoutes = routesOf(healthUrls, healthSchemas)

/**
 * Liveness: 200 while the process runs. `db` is the last background check of the database, so a
 * monitor can read it without each probe costing a query.
 */
export const getCloudHealth = healthRoutes.cloud

/** Readiness for load balancers: 200 when every dependency answers, else 503 naming the failing ones. */
export const getCloudReadiness = healthRoutes.cloudReadiness

/** The relay's health: 503 with the same report while its database check fails. */
export const getRelayHealth = healthRoutes.relay
