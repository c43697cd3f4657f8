import { type Static, type TSchema, Type } from 'typebox'
import { ErrorBody } from './errors.js'
import { DAY, HOUR, MINUTE, SECOND } from './time.js'

export const notificationTypes = {
  success: { color: 'green', defaultDuration: 6 * SECOND },
  error: { color: 'red', defaultDuration: 8 * SECOND },
  warning: { color: 'orange', defaultDuration: 7 * SECOND },
  info: { color: 'blue', defaultDuration: 6 * SECOND },
} as const
export type NotificationType = keyof typeof notificationTypes

/** Each category is shown only while its flag is true. */
export const notificationCategories = {
  api: 'notifications_api_calls',
  auth: 'notifications_auth_events',
  cloud: 'notifications_cloud_sync',
  system: 'notifications_system',
} as const
export type NotificationCategory = keyof typeof notificationCategories

export const featureFlagDefaults = {
  notifications_enabled: true,
  notifications_backend_polling: true,
  notifications_polling_interval: 15 * SECOND,
  notifications_max_concurrent: 5,
  notifications_api_calls: true,
  notifications_auth_events: true,
  notifications_cloud_sync: true,
  notifications_system: true,
  notifications_duration_success: notificationTypes.success.defaultDuration,
  notifications_duration_error: notificationTypes.error.defaultDuration,
} as const

/** `expiresIn: null` marks a persistent kind, which never expires. */
type KindRule = { type: NotificationType; category: NotificationCategory; expiresIn: number | null }

/** The pre-built kinds, with the spec's expiry and persistence. */
export const notificationKinds = {
  healthReportSent: { type: 'success', category: 'system', expiresIn: 60 * SECOND },
  healthReportFailed: { type: 'error', category: 'system', expiresIn: 10 * MINUTE },
  userLogin: { type: 'success', category: 'auth', expiresIn: 30 * MINUTE },
  userLogout: { type: 'info', category: 'auth', expiresIn: 15 * MINUTE },
  systemUpdate: { type: 'info', category: 'system', expiresIn: 24 * HOUR },
  systemUpdateAvailable: { type: 'info', category: 'system', expiresIn: 24 * HOUR },
  systemUpdateInstalled: { type: 'success', category: 'system', expiresIn: 2 * HOUR },
  apiSuccess: { type: 'success', category: 'api', expiresIn: 15 * MINUTE },
  apiError: { type: 'error', category: 'api', expiresIn: 2 * HOUR },
  deviceConnected: { type: 'success', category: 'system', expiresIn: 30 * MINUTE },
  deviceDisconnected: { type: 'warning', category: 'system', expiresIn: HOUR },
  junctionStarted: { type: 'success', category: 'system', expiresIn: 30 * MINUTE },
  junctionStopped: { type: 'info', category: 'system', expiresIn: HOUR },
  junctionError: { type: 'error', category: 'system', expiresIn: 6 * HOUR },
  databaseBackupSuccess: { type: 'success', category: 'cloud', expiresIn: HOUR },
  databaseBackupFailure: { type: 'error', category: 'cloud', expiresIn: 12 * HOUR },
  cloudSyncStarted: { type: 'info', category: 'cloud', expiresIn: 5 * MINUTE },
  authenticationFailure: { type: 'error', category: 'auth', expiresIn: null },
  sessionExpired: { type: 'warning', category: 'auth', expiresIn: null },
  cloudAuthenticationRequired: { type: 'warning', category: 'cloud', expiresIn: null },
} as const satisfies Record<string, KindRule>
export type NotificationKind = keyof typeof notificationKinds

export const notificationLimits = {
  messageMaxLength: 2000,
  titleMaxLength: 200,
  pendingPageSize: 50,
  historyPageMax: 100,
  /** Maintenance removes notifications delivered longer ago than this. */
  deliveredRetention: 30 * DAY,
  defaultCleanupOlderThanDays: 30,
} as const

// ---------------------------------------------------------------------------------------------
// Wire schemas

const notificationTypeNames = Object.keys(notificationTypes) as NotificationType[]
const notificationCategoryNames = Object.keys(notificationCategories) as NotificationCategory[]

export const NotificationTypeName = Type.Enum(notificationTypeNames)
export const NotificationCategoryName = Type.Enum(notificationCategoryNames)

const Timestamp = Type.String({ format: 'date-time', maxLength: 40 })

export const Notification = Type.Object({
  id: Type.String(),
  /** Position in the relay's monotonic sequence; `pending?since=` takes the largest one seen. */
  seq: Type.Integer(),
  type: NotificationTypeName,
  category: NotificationCategoryName,
  title: Type.Union([Type.String(), Type.Null()]),
  message: Type.String(),
  /** Display duration, milliseconds; null means the type's default (or its duration flag). */
  duration: Type.Union([Type.Integer(), Type.Null()]),
  persistent: Type.Boolean(),
  createdAt: Timestamp,
  isDelivered: Type.Boolean(),
  deliveredAt: Type.Union([Timestamp, Type.Null()]),
  expiresAt: Type.Union([Timestamp, Type.Null()]),
})
export type Notification = Static<typeof Notification>

const Message = Type.String({ minLength: 1, maxLength: notificationLimits.messageMaxLength })
const Title = Type.String({ maxLength: notificationLimits.titleMaxLength })

export const CreateNotificationBody = Type.Object(
  {
    message: Message,
    type: Type.Optional(NotificationTypeName),
    category: Type.Optional(NotificationCategoryName),
    title: Type.Optional(Title),
    duration: Type.Optional(Type.Integer({ minimum: 1000, maximum: 10 * MINUTE })),
    persistent: Type.Optional(Type.Boolean()),
    /** Must lie in the future; ignored for persistent notifications, which never expire. */
    expiresAt: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
)
export type CreateNotificationBody = Static<typeof CreateNotificationBody>

export const PendingQuery = Type.Object({
  /** The `cursor` of the previous reply: only notifications made after it are returned. */
  since: Type.Optional(Type.Integer({ minimum: 0 })),
})
export type PendingQuery = Static<typeof PendingQuery>

export const PendingReply = Type.Object({
  notifications: Type.Array(Notification),
  cursor: Type.Integer(),
  /** More notifications wait beyond this page: poll again at once with the new cursor. */
  hasMore: Type.Boolean(),
})
export type PendingReply = Static<typeof PendingReply>

export const HistoryQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: notificationLimits.historyPageMax, default: 25 })),
  /** The `nextCursor` of the previous page. */
  before: Type.Optional(Type.Integer({ minimum: 0 })),
  category: Type.Optional(NotificationCategoryName),
  type: Type.Optional(NotificationTypeName),
})
export type HistoryQuery = Static<typeof HistoryQuery>

export const HistoryReply = Type.Object({
  notifications: Type.Array(Notification),
  /** Pass as `before` for the next (older) page; null on the last page. */
  nextCursor: Type.Union([Type.Integer(), Type.Null()]),
  /** Notifications matching the filters, across all pages. */
  total: Type.Integer(),
})
export type HistoryReply = Static<typeof HistoryReply>

export const NotificationIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })

export const NotificationReply = Type.Object({ success: Type.Literal(true), notification: Notification })
export type NotificationReply = Static<typeof NotificationReply>

export const RemovedReply = Type.Object({ success: Type.Literal(true), removed: Type.Integer() })
export type RemovedReply = Static<typeof RemovedReply>

export const CleanupQuery = Type.Object({
  olderThanDays: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 3650, default: notificationLimits.defaultCleanupOlderThanDays }),
  ),
})

export const AckBody = Type.Object(
  { ids: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
)
export type AckBody = Static<typeof AckBody>
export const AckReply = Type.Object({ success: Type.Literal(true), acknowledged: Type.Integer() })

const DeviceName = Type.String({ minLength: 1, maxLength: 200 })

export const HealthReportSentBody = Type.Object({ deviceName: DeviceName }, { additionalProperties: false })
export const HealthReportFailedBody = Type.Object(
  { deviceName: DeviceName, error: Type.String({ minLength: 1, maxLength: 1000 }) },
  { additionalProperties: false },
)
export const SystemUpdateBody = Type.Object(
  { version: Type.String({ minLength: 1, maxLength: 50 }), message: Type.Optional(Message) },
  { additionalProperties: false },
)

export const authEvents = ['login', 'logout', 'failure', 'session-expired', 'cloud-auth-required'] as const
export type AuthEvent = (typeof authEvents)[number]
export const AuthEventBody = Type.Object(
  { event: Type.Enum(authEvents), username: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
)
export type AuthEventBody = Static<typeof AuthEventBody>

// Feature flags ------------------------------------------------------------------------------

const Milliseconds = (minimum: number, maximum: number) => Type.Integer({ minimum, maximum })

export const FeatureFlags = Type.Object(
  {
    notifications_enabled: Type.Boolean(),
    notifications_backend_polling: Type.Boolean(),
    notifications_polling_interval: Milliseconds(SECOND, 10 * MINUTE),
    notifications_max_concurrent: Type.Integer({ minimum: 1, maximum: 20 }),
    notifications_api_calls: Type.Boolean(),
    notifications_auth_events: Type.Boolean(),
    notifications_cloud_sync: Type.Boolean(),
    notifications_system: Type.Boolean(),
    notifications_duration_success: Milliseconds(SECOND, 2 * MINUTE),
    notifications_duration_error: Milliseconds(SECOND, 2 * MINUTE),
  },
  { additionalProperties: false },
)
export type FeatureFlags = Static<typeof FeatureFlags>
export type FeatureFlagName = keyof FeatureFlags

/** Any subset of the flags; an unknown flag or a wrong type is a 400. */
export const FeatureFlagsUpdate = Type.Partial(FeatureFlags, { additionalProperties: false, minProperties: 1 })
export type FeatureFlagsUpdate = Static<typeof FeatureFlagsUpdate>

// Routes ----------------------------------------------------------------------------------------

const errors = { 400: ErrorBody, 404: ErrorBody } satisfies Record<number, TSchema>
const base = '/api/notifications'

export const notificationRoutes = {
  pending: {
    method: 'GET',
    url: `${base}/pending`,
    schema: { querystring: PendingQuery, response: { 200: PendingReply, ...errors } },
  },
  create: {
    method: 'POST',
    url: base,
    schema: { body: CreateNotificationBody, response: { 201: NotificationReply, ...errors } },
  },
  history: {
    method: 'GET',
    url: `${base}/history`,
    schema: { querystring: HistoryQuery, response: { 200: HistoryReply, ...errors } },
  },
  cleanup: {
    method: 'DELETE',
    url: `${base}/cleanup`,
    schema: { querystring: CleanupQuery, response: { 200: RemovedReply, ...errors } },
  },
  removeExpired: { method: 'DELETE', url: `${base}/expired`, schema: { response: { 200: RemovedReply, ...errors } } },
  ack: { method: 'POST', url: `${base}/ack`, schema: { body: AckBody, response: { 200: AckReply, ...errors } } },
  healthReportSent: {
    method: 'POST',
    url: `${base}/health-report-sent`,
    schema: { body: HealthReportSentBody, response: { 201: NotificationReply, ...errors } },
  },
  healthReportFailed: {
    method: 'POST',
    url: `${base}/health-report-failed`,
    schema: { body: HealthReportFailedBody, response: { 201: NotificationReply, ...errors } },
  },
  systemUpdate: {
    method: 'POST',
    url: `${base}/system-update`,
    schema: { body: SystemUpdateBody, response: { 201: NotificationReply, ...errors } },
  },
  authEvent: {
    method: 'POST',
    url: `${base}/auth-event`,
    schema: { body: AuthEventBody, response: { 201: NotificationReply, ...errors } },
  },
  get: {
    method: 'GET',
    url: `${base}/:id`,
    schema: { params: NotificationIdParams, response: { 200: Notification, ...errors } },
  },
} as const

export const featureFlagRoutes = {
  get: { method: 'GET', url: '/api/feature-flags', schema: { response: { 200: FeatureFlags } } },
  update: {
    method: 'PUT',
    url: '/api/feature-flags',
    schema: { body: FeatureFlagsUpdate, response: { 200: FeatureFlags, 400: ErrorBody } },
  },
} as const
