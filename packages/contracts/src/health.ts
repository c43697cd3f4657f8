import { type Static, Type } from 'typebox'

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

/** 503 answers with the same body, so a monitor can read what is down. */
export const getCloudHealth = {
  method: 'GET',
  url: '/healthz',
  schema: { response: { 200: CloudHealth, 503: CloudHealth } },
} as const

export const getRelayHealth = {
  method: 'GET',
  url: '/api/health',
  schema: { response: { 200: RelayHealth, 503: RelayHealth } },
} as const
