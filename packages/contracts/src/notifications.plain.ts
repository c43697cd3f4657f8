import { endpoint } from './endpoint.js'
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
  // A backup that could not be proven restorable; the message says what failed and what to do.
  backupVerificationFailure: { type: 'error', category: 'cloud', expiresIn: 24 * HOUR },
  cloudSyncStarted: { type: 'info', category: 'cloud', expiresIn: 5 * MINUTE },
  authenticationFailure: { type: 'error', category: 'auth', expiresIn: null },
  sessionExpired: { type: 'warning', category: 'auth', expiresIn: null },
  cloudAuthenticationRequired: { type: 'warning', category: 'cloud', expiresIn: null },
  // Source health: raised when a collector enters `failing` (a stream's failure is a junction error),
  // updated while it stays failing, resolved with a recovery notice when it is healthy again.
  collectorFailing: { type: 'error', category: 'system', expiresIn: 6 * HOUR },
  sourceRecovered: { type: 'success', category: 'system', expiresIn: 30 * MINUTE },
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
  /** Ids acknowledged in one request. */
  ackMaxIds: 100,
} as const

export const authEvents = ['login', 'logout', 'failure', 'session-expired', 'cloud-auth-required'] as const
export type AuthEvent = (typeof authEvents)[number]

/** The inclusive range of each numeric flag; durations in milliseconds. */
export const featureFlagRanges = {
  notifications_polling_interval: { min: SECOND, max: 10 * MINUTE },
  notifications_max_concurrent: { min: 1, max: 20 },
  notifications_duration_success: { min: SECOND, max: 2 * MINUTE },
  notifications_duration_error: { min: SECOND, max: 2 * MINUTE },
} as const

// Endpoints ------------------------------------------------------------------------------------

const base = '/api/notifications'

export const notificationUrls = {
  pending: endpoint('GET', `${base}/pending`),
  create: endpoint('POST', base),
  history: endpoint('GET', `${base}/history`),
  cleanup: endpoint('DELETE', `${base}/cleanup`),
  removeExpired: endpoint('DELETE', `${base}/expired`),
  ack: endpoint('POST', `${base}/ack`),
  healthReportSent: endpoint('POST', `${base}/health-report-sent`),
  healthReportFailed: endpoint('POST', `${base}/health-report-failed`),
  systemUpdate: endpoint('POST', `${base}/system-update`),
  authEvent: endpoint('POST', `${base}/auth-event`),
  get: endpoint('GET', `${base}/:id`),
}

export const featureFlagUrls = {
  get: endpoint('GET', '/api/feature-flags'),
  update: endpoint('PUT', '/api/feature-flags'),
}
