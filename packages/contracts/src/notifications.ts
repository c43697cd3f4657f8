import { type Static, type TSchema, Type } from 'typebox'
import { routesOf } from './endpoint.js'
import { ErrorBody } from './errors.js'
import {
  authEvents,
  featureFlagRanges,
  featureFlagUrls,
  type NotificationCategory,
  type NotificationType,
  notificationCategories,
  notificationLimits,
  notificationTypes,
  notificationUrls,
} from './notifications.plain.js'
import { MINUTE } from './time.js'

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
  /**
   * How many times its condition was seen: a failing source updates its one open notification
   * (count, last seen) instead of adding rows.
   */
  occurrences: Type.Integer({ minimum: 1 }),
  lastSeenAt: Timestamp,
  /** When its condition ended (the source recovered or was stopped); null while open or for plain notices. */
  resolvedAt: Type.Union([Timestamp, Type.Null()]),
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
  {
    ids: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: notificationLimits.ackMaxIds,
    }),
  },
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

export const AuthEventBody = Type.Object(
  { event: Type.Enum(authEvents), username: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
)
export type AuthEventBody = Static<typeof AuthEventBody>

// Feature flags ------------------------------------------------------------------------------

const InRange = ({ min, max }: { min: number; max: number }) => Type.Integer({ minimum: min, maximum: max })

export const FeatureFlags = Type.Object(
  {
    notifications_enabled: Type.Boolean(),
    notifications_backend_polling: Type.Boolean(),
    notifications_polling_interval: InRange(featureFlagRanges.notifications_polling_interval),
    notifications_max_concurrent: InRange(featureFlagRanges.notifications_max_concurrent),
    notifications_api_calls: Type.Boolean(),
    notifications_auth_events: Type.Boolean(),
    notifications_cloud_sync: Type.Boolean(),
    notifications_system: Type.Boolean(),
    notifications_duration_success: InRange(featureFlagRanges.notifications_duration_success),
    notifications_duration_error: InRange(featureFlagRanges.notifications_duration_error),
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

const notificationSchemas = {
  pending: { querystring: PendingQuery, response: { 200: PendingReply, ...errors } },
  create: { body: CreateNotificationBody, response: { 201: NotificationReply, ...errors } },
  history: { querystring: HistoryQuery, response: { 200: HistoryReply, ...errors } },
  cleanup: { querystring: CleanupQuery, response: { 200: RemovedReply, ...errors } },
  removeExpired: { response: { 200: RemovedReply, ...errors } },
  ack: { body: AckBody, response: { 200: AckReply, ...errors } },
  healthReportSent: { body: HealthReportSentBody, response: { 201: NotificationReply, ...errors } },
  healthReportFailed: { body: HealthReportFailedBody, response: { 201: NotificationReply, ...errors } },
  systemUpdate: { body: SystemUpdateBody, response: { 201: NotificationReply, ...errors } },
  authEvent: { body: AuthEventBody, response: { 201: NotificationReply, ...errors } },
  get: { params: NotificationIdParams, response: { 200: Notification, ...errors } },
} as const
export type NotificationSchemas = typeof notificationSchemas

export const notificationRoutes = routesOf(notificationUrls, notificationSchemas)

const featureFlagSchemas = {
  get: { response: { 200: FeatureFlags } },
  update: { body: FeatureFlagsUpdate, response: { 200: FeatureFlags, 400: ErrorBody } },
} as const
export type FeatureFlagSchemas = typeof featureFlagSchemas

export const featureFlagRoutes = routesOf(featureFlagUrls, featureFlagSchemas)
