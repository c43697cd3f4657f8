import { type Static, type TSchema, Type } from 'typebox'
import { routesOf } from './endpoint.js'
import { ErrorBody } from './errors.js'
import { healthHistoryLimits, healthHistoryUrls, healthItemPattern } from './health-history.plain.js'
import { healthStates } from './sources.plain.js'

const Timestamp = Type.String({ format: 'date-time' })
const Item = Type.String({ pattern: healthItemPattern, maxLength: 60 })
const Text = Type.Union([Type.String(), Type.Null()])

export const HealthHistoryQuery = Type.Object(
  {
    item: Item,
    /** Inclusive; `to` minus a day when left out. */
    from: Type.Optional(Timestamp),
    /** Exclusive; now when left out. */
    to: Type.Optional(Timestamp),
    /**
     * Minutes per bucket; at most `healthHistoryLimits.maxBuckets` buckets may cover the range. When
     * left out, the smallest size that does.
     */
    bucket: Type.Optional(
      Type.Integer({ minimum: healthHistoryLimits.bucketMinutes.min, maximum: healthHistoryLimits.bucketMinutes.max }),
    ),
  },
  { additionalProperties: false },
)
export type HealthHistoryQuery = Static<typeof HealthHistoryQuery>

/** One bucket's polls or sends; buckets without any are left out. */
export const HealthBucket = Type.Object({
  /** The bucket's first minute. */
  start: Timestamp,
  ok: Type.Integer({ minimum: 0 }),
  failed: Type.Integer({ minimum: 0 }),
  /** Over every poll or send of the bucket, failed ones too. */
  meanLatencyMs: Type.Number({ minimum: 0 }),
  maxLatencyMs: Type.Number({ minimum: 0 }),
  /** The bucket's last error, shortened; null when none failed. */
  lastError: Text,
})
export type HealthBucket = Static<typeof HealthBucket>

/** One bucket of a sensor's numeric values (booleans count as 0 and 1). */
export const SensorPoint = Type.Object({
  start: Timestamp,
  min: Type.Number(),
  max: Type.Number(),
  avg: Type.Number(),
  last: Type.Number(),
})
export type SensorPoint = Static<typeof SensorPoint>

export const SensorSeries = Type.Object({
  /** The sensor's id at its collector. */
  sensor: Type.String(),
  /** Its current name and unit; null once the sensor is gone. */
  name: Text,
  unit: Text,
  points: Type.Array(SensorPoint),
})
export type SensorSeries = Static<typeof SensorSeries>

export const HealthHistoryReply = Type.Object({
  item: Type.String(),
  from: Timestamp,
  to: Timestamp,
  bucketMinutes: Type.Integer({ minimum: 1 }),
  buckets: Type.Array(HealthBucket),
  /** A collector's sensors; empty for a stream. */
  sensors: Type.Array(SensorSeries),
})
export type HealthHistoryReply = Static<typeof HealthHistoryReply>

export const HealthEventsQuery = Type.Object(
  {
    /** Every item's events when left out. */
    item: Type.Optional(Item),
    from: Type.Optional(Timestamp),
    to: Type.Optional(Timestamp),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: healthHistoryLimits.events.maxLimit,
        default: healthHistoryLimits.events.defaultLimit,
      }),
    ),
    /** The `nextCursor` of the previous page. */
    before: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
)
export type HealthEventsQuery = Static<typeof HealthEventsQuery>

/** A change of state. */
export const HealthEvent = Type.Object({
  id: Type.Integer(),
  item: Type.String(),
  from: Type.Enum(healthStates),
  to: Type.Enum(healthStates),
  at: Timestamp,
  /** Why, as the new state says it (the error, what is lost); shortened. */
  reason: Text,
})
export type HealthEvent = Static<typeof HealthEvent>

export const HealthEventsReply = Type.Object({
  /** Newest first. */
  events: Type.Array(HealthEvent),
  /** Pass as `before` for the next (older) page; null on the last page. */
  nextCursor: Type.Union([Type.Integer(), Type.Null()]),
})
export type HealthEventsReply = Static<typeof HealthEventsReply>

const errors = { 400: ErrorBody, 404: ErrorBody } satisfies Record<number, TSchema>

const healthHistorySchemas = {
  history: { querystring: HealthHistoryQuery, response: { 200: HealthHistoryReply, ...errors } },
  events: { querystring: HealthEventsQuery, response: { 200: HealthEventsReply, ...errors } },
} as const
export type HealthHistorySchemas = typeof healthHistorySchemas

export const healthHistoryRoutes = routesOf(healthHistoryUrls, healthHistorySchemas)
