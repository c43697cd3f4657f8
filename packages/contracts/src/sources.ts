import { type Static, type TSchema, Type } from 'typebox'
import { collectorTypes, streamTypes } from './dashboard.plain.js'
import { routesOf } from './endpoint.js'
import { ErrorBody } from './errors.js'
import { AcknowledgedMark, SilencedMark } from './health-alerts.js'
import {
  collectorWarningCodes,
  healthStates,
  junctionStatuses,
  sourceHealthLimits,
  sourceLimits,
  sourceUrls,
} from './sources.plain.js'

const Id = Type.String({ format: 'uuid' })
const Name = Type.String({ minLength: 1, maxLength: 100 })
const Timestamp = Type.String({ format: 'date-time' })
const NullableTimestamp = Type.Union([Timestamp, Type.Null()])
const Url = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000 })
const BrokerUrl = Type.String({ format: 'uri', pattern: '^mqtts?://', maxLength: 2000 })
const Topic = Type.String({ minLength: 1, maxLength: 500 })

// Health ---------------------------------------------------------------------------------------

export const ItemHealth = Type.Object({
  state: Type.Enum(healthStates),
  /** When it entered this state. */
  since: Timestamp,
  /** Why it is not healthy: the last error, what is lost, or why it cannot run. */
  reason: Type.Union([Type.String(), Type.Null()]),
  consecutiveFailures: Type.Integer({ minimum: 0 }),
})
export type ItemHealth = Static<typeof ItemHealth>

const InRange = ({ min, max }: { min: number; max: number }) => Type.Integer({ minimum: min, maximum: max })

export const SourceHealthSettings = Type.Object(
  {
    /** Consecutive failed polls or sends before an item turns `failing` (and a notification is raised). */
    failuresBeforeFailing: InRange(sourceHealthLimits.failuresBeforeFailing),
    /** Consecutive successes before a failing item is healthy again (and its notification resolved). */
    successesBeforeHealthy: InRange(sourceHealthLimits.successesBeforeHealthy),
    /** Days of health history kept; older buckets and events are pruned by the maintenance job. */
    historyRetentionDays: InRange(sourceHealthLimits.historyRetentionDays),
  },
  { additionalProperties: false },
)
export type SourceHealthSettings = Static<typeof SourceHealthSettings>
export const SourceHealthSettingsUpdate = Type.Partial(SourceHealthSettings, {
  additionalProperties: false,
  minProperties: 1,
})
export type SourceHealthSettingsUpdate = Static<typeof SourceHealthSettingsUpdate>

// Collectors -----------------------------------------------------------------------------------

/** One value read out of a JSON document: `path` is dot-separated, array indexes as numbers (`data.0.temp`). */
export const JsonPathSensor = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 500 }),
    name: Type.Optional(Name),
    unit: Type.Optional(Type.String({ maxLength: 20 })),
  },
  { additionalProperties: false },
)
export type JsonPathSensor = Static<typeof JsonPathSensor>

export const collectorSettingsSchemas = {
  Host: Type.Object({}, { additionalProperties: false }),
  GenericAPI: Type.Object(
    {
      url: Url,
      /** Values to read; without any, every number in the document becomes a sensor. */
      sensors: Type.Optional(Type.Array(JsonPathSensor, { maxItems: sourceLimits.sensorsPerCollector })),
    },
    { additionalProperties: false },
  ),
  MQTT: Type.Object(
    { brokerUrl: BrokerUrl, topics: Type.Array(Topic, { minItems: 1, maxItems: 100 }) },
    { additionalProperties: false },
  ),
  Virtual: Type.Object(
    {
      sensorCount: Type.Integer({ minimum: 1, maximum: 100 }),
      min: Type.Optional(Type.Number()),
      max: Type.Optional(Type.Number()),
    },
    { additionalProperties: false },
  ),
  EventEngine: Type.Object({}, { additionalProperties: false }),
} satisfies Record<(typeof collectorTypes)[number], TSchema>

export const CollectorSettings = Type.Union(Object.values(collectorSettingsSchemas))

export const Collector = Type.Object({
  id: Id,
  name: Name,
  collectorType: Type.Enum(collectorTypes),
  pollRateMs: Type.Integer(),
  settings: Type.Record(Type.String(), Type.Unknown()),
  /** Started: it polls whenever the relay runs (a running junction starts its collectors too). */
  active: Type.Boolean(),
  /** Polling right now. */
  running: Type.Boolean(),
  hasAccessToken: Type.Boolean(),
  /** The access token is protected by a user password and must be unlocked after each restart. */
  externalAccessToken: Type.Boolean(),
  unlocked: Type.Boolean(),
  lastFetchTime: NullableTimestamp,
  lastFetchSuccessful: Type.Boolean(),
  lastFetchErrorMessage: Type.Union([Type.String(), Type.Null()]),
  lastFetchTotalSensors: Type.Integer(),
  lastFetchNewSensors: Type.Integer(),
  lastFetchLostSensors: Type.Integer(),
  health: ItemHealth,
  /** Its warnings were seen (see `/api/health/acknowledgements`). */
  acknowledged: Type.Optional(AcknowledgedMark),
  /** It raises no notifications until then (see `/api/health/silences`). */
  silenced: Type.Optional(SilencedMark),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Collector = Static<typeof Collector>

const AccessToken = Type.String({ minLength: 1, maxLength: 4096 })
const Password = Type.String({ minLength: 8, maxLength: 200 })

export const CreateCollectorBody = Type.Object(
  {
    name: Name,
    collectorType: Type.Enum(collectorTypes),
    pollRateMs: Type.Optional(Type.Integer({ minimum: sourceLimits.pollRate.min, maximum: sourceLimits.pollRate.max })),
    settings: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /**
     * Sent as a bearer token by GenericAPI collectors, only to the origin of their URL (a redirect to
     * another origin goes without it); stored encrypted, never returned.
     */
    accessToken: Type.Optional(AccessToken),
    /** When given, the token is also encrypted under this password and stays locked after a restart. */
    accessTokenPassword: Type.Optional(Password),
  },
  { additionalProperties: false },
)
export type CreateCollectorBody = Static<typeof CreateCollectorBody>

export const UpdateCollectorBody = Type.Partial(
  Type.Object(
    {
      ...CreateCollectorBody.properties,
      /**
       * null removes the token (and its password protection). Left out, the token is kept, unless the
       * address moves to another origin: it is then removed (see ACCESS_TOKEN_REMOVED).
       */
      accessToken: Type.Union([AccessToken, Type.Null()]),
    },
    { additionalProperties: false },
  ),
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateCollectorBody = Static<typeof UpdateCollectorBody>

/**
 * Something a change did beyond what was asked. ACCESS_TOKEN_REMOVED: the collector's address now
 * points to another origin (scheme, host or port), so its saved token was removed rather than sent
 * there; the same request must carry the token again to keep one.
 */
export const CollectorWarning = Type.Object({ code: Type.Enum(collectorWarningCodes), message: Type.String() })
export type CollectorWarning = Static<typeof CollectorWarning>

export const UpdateCollectorReply = Type.Object({ ...Collector.properties, warnings: Type.Array(CollectorWarning) })
export type UpdateCollectorReply = Static<typeof UpdateCollectorReply>

export const UnlockCollectorBody = Type.Object({ password: Password }, { additionalProperties: false })

export const Sensor = Type.Object({
  id: Id,
  collectorId: Id,
  externalId: Type.String(),
  name: Type.String(),
  unit: Type.Union([Type.String(), Type.Null()]),
  value: Type.Union([Type.Number(), Type.String(), Type.Boolean(), Type.Null()]),
  lastUpdated: NullableTimestamp,
  /** No longer reported by its source (counted as lost at the fetch that noticed). */
  missing: Type.Boolean(),
  /** Its collector's health; `failing` while the sensor is missing. */
  health: ItemHealth,
})
export type Sensor = Static<typeof Sensor>

// Streams --------------------------------------------------------------------------------------

export const streamSettingsSchemas = {
  HTTP: Type.Object({ url: Url }, { additionalProperties: false }),
  MQTT: Type.Object({ brokerUrl: BrokerUrl, topic: Topic }, { additionalProperties: false }),
  WebSocket: Type.Object({}, { additionalProperties: false }),
  Virtual: Type.Object({}, { additionalProperties: false }),
  COM: Type.Object(
    {
      path: Type.String({ minLength: 1, maxLength: 200 }),
      baudRate: Type.Optional(Type.Integer({ minimum: 110, maximum: 4_000_000 })),
    },
    { additionalProperties: false },
  ),
} satisfies Record<(typeof streamTypes)[number], TSchema>

export const Stream = Type.Object({
  id: Id,
  name: Name,
  type: Type.Enum(streamTypes),
  settings: Type.Record(Type.String(), Type.Unknown()),
  deviceName: Type.Union([Type.String(), Type.Null()]),
  screenId: Type.Union([Type.String(), Type.Null()]),
  /** Sending right now, as the target of a running junction. */
  running: Type.Boolean(),
  lastSentTime: NullableTimestamp,
  lastError: Type.Union([Type.String(), Type.Null()]),
  health: ItemHealth,
  /** Its warnings were seen (see `/api/health/acknowledgements`). */
  acknowledged: Type.Optional(AcknowledgedMark),
  /** It raises no notifications until then (see `/api/health/silences`). */
  silenced: Type.Optional(SilencedMark),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Stream = Static<typeof Stream>

export const CreateStreamBody = Type.Object(
  {
    name: Name,
    type: Type.Enum(streamTypes),
    settings: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    deviceName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    screenId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
)
export type CreateStreamBody = Static<typeof CreateStreamBody>
const Label = Type.String({ minLength: 1, maxLength: 100 })

export const UpdateStreamBody = Type.Partial(
  Type.Object(
    {
      ...CreateStreamBody.properties,
      /** null clears the field. */
      deviceName: Type.Union([Label, Type.Null()]),
      screenId: Type.Union([Label, Type.Null()]),
    },
    { additionalProperties: false },
  ),
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateStreamBody = Static<typeof UpdateStreamBody>

// Junctions ------------------------------------------------------------------------------------

export const JunctionTarget = Type.Object(
  {
    streamId: Id,
    sendRateMs: Type.Integer({ minimum: sourceLimits.sendRate.min, maximum: sourceLimits.sendRate.max }),
  },
  { additionalProperties: false },
)

export const Junction = Type.Object({
  id: Id,
  name: Name,
  status: Type.Enum(junctionStatuses),
  autoStart: Type.Boolean(),
  collectorIds: Type.Array(Id),
  targets: Type.Array(JunctionTarget),
  lastError: Type.Union([Type.String(), Type.Null()]),
  /** The worst health of its collectors and target streams while it runs; `stopped` while idle. */
  health: ItemHealth,
  /** Its warnings were seen (see `/api/health/acknowledgements`). */
  acknowledged: Type.Optional(AcknowledgedMark),
  /** It raises no notifications until then (see `/api/health/silences`). */
  silenced: Type.Optional(SilencedMark),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Junction = Static<typeof Junction>

export const CreateJunctionBody = Type.Object(
  {
    name: Name,
    autoStart: Type.Optional(Type.Boolean()),
    collectorIds: Type.Array(Id, { maxItems: 100, uniqueItems: true }),
    targets: Type.Array(JunctionTarget, { maxItems: 100 }),
  },
  { additionalProperties: false },
)
export type CreateJunctionBody = Static<typeof CreateJunctionBody>
export const UpdateJunctionBody = Type.Partial(CreateJunctionBody, { additionalProperties: false, minProperties: 1 })
export type UpdateJunctionBody = Static<typeof UpdateJunctionBody>

export const IdParams = Type.Object({ id: Id })

export const sourceErrors = { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody } as const

// Routes ----------------------------------------------------------------------------------------

const ok = Type.Object({ success: Type.Literal(true) })
const withId = { params: IdParams }

const sourceSchemas = {
  listCollectors: { response: { 200: Type.Array(Collector) } },
  createCollector: { body: CreateCollectorBody, response: { 201: Collector, ...sourceErrors } },
  getCollector: { ...withId, response: { 200: Collector, ...sourceErrors } },
  updateCollector: { ...withId, body: UpdateCollectorBody, response: { 200: UpdateCollectorReply, ...sourceErrors } },
  deleteCollector: { ...withId, response: { 200: ok, ...sourceErrors } },
  startCollector: { ...withId, response: { 200: Collector, ...sourceErrors } },
  stopCollector: { ...withId, response: { 200: Collector, ...sourceErrors } },
  unlockCollector: {
    ...withId,
    body: UnlockCollectorBody,
    response: { 200: Collector, 403: ErrorBody, ...sourceErrors },
  },
  listSensors: { ...withId, response: { 200: Type.Array(Sensor), ...sourceErrors } },
  listStreams: { response: { 200: Type.Array(Stream) } },
  createStream: { body: CreateStreamBody, response: { 201: Stream, ...sourceErrors } },
  getStream: { ...withId, response: { 200: Stream, ...sourceErrors } },
  updateStream: { ...withId, body: UpdateStreamBody, response: { 200: Stream, ...sourceErrors } },
  deleteStream: { ...withId, response: { 200: ok, ...sourceErrors } },
  listJunctions: { response: { 200: Type.Array(Junction) } },
  createJunction: { body: CreateJunctionBody, response: { 201: Junction, ...sourceErrors } },
  getJunction: { ...withId, response: { 200: Junction, ...sourceErrors } },
  updateJunction: { ...withId, body: UpdateJunctionBody, response: { 200: Junction, ...sourceErrors } },
  deleteJunction: { ...withId, response: { 200: ok, ...sourceErrors } },
  startJunction: { ...withId, response: { 200: Junction, ...sourceErrors } },
  stopJunction: { ...withId, response: { 200: Junction, ...sourceErrors } },
  getHealthSettings: { response: { 200: SourceHealthSettings } },
  updateHealthSettings: {
    body: SourceHealthSettingsUpdate,
    response: { 200: SourceHealthSettings, 400: ErrorBody },
  },
} as const
export type SourceSchemas = typeof sourceSchemas

export const sourceRoutes = routesOf(sourceUrls, sourceSchemas)
