import { type Static, Type } from 'typebox'
import { ErrorBody } from './errors.js'
import { DAY, HOUR, MB, MINUTE, SECOND } from './time.js'

export const backupFrequencies = ['daily', 'weekly', 'monthly'] as const
export type BackupFrequency = (typeof backupFrequencies)[number]

export const backupStatuses = ['pending', 'completed', 'failed'] as const
export type BackupStatus = (typeof backupStatuses)[number]

/** A backup is due when at least this long has passed since lastBackup. */
export const backupDueAfter = {
  daily: DAY,
  weekly: 7 * DAY,
  monthly: 30 * DAY,
} as const satisfies Record<BackupFrequency, number>

/**
 * Quotas, checked in this order on request-upload; counted over completed backups and pending ones
 * that have not lapsed (`pendingLapsesAfter`).
 */
export const backupQuota = {
  maxBackupBytes: 50 * MB,
  maxTotalBytes: 500 * MB,
  maxBackups: 500,
} as const

export const quotaReasons = {
  QUOTA_BACKUP_SIZE: 'Backup size exceeds the maximum of 50MB',
  QUOTA_STORAGE: 'Storage limit of 500MB would be exceeded; delete old backups first',
  QUOTA_COUNT: 'Maximum of 500 backups reached; delete old backups first',
} as const

export const backupLimits = {
  presignedUrlValidity: 30 * MINUTE,
  /**
   * How long after its upload URL lapsed a pending backup may still finish: a PUT started just in
   * time, then complete-upload. Past both it is released (see `pendingLapsesAfter`).
   */
  pendingGrace: 15 * MINUTE,
  stalePendingAfter: 24 * HOUR,
  listMax: 100,
  retentionDays: { min: 1, max: 365, default: 30 },
  /** Field lengths of the backup record. */
  idFieldMaxLength: 255,
  storageKeyMaxLength: 500,
  statusMaxLength: 50,
} as const

export const backupSchedule = {
  startupDelay: 30 * SECOND,
  checkInterval: 15 * MINUTE,
} as const

/**
 * A pending backup this old is released: it stops counting toward the quotas at once, can no longer
 * be completed, and the hourly release job marks it failed and deletes any stored file.
 */
export const pendingLapsesAfter = backupLimits.presignedUrlValidity + backupLimits.pendingGrace

/**
 * The cloud's backup jobs. Each records its last run in the database: an instance starts a job at
 * once when its last run is older than its interval (or there is none), then an interval after each run.
 */
export const cleanupWorker = {
  /** The spec's cleanup: expired backups, and pending ones older than `stalePendingAfter`. */
  interval: DAY,
  /** Releases pending backups past `pendingLapsesAfter`. */
  releaseInterval: HOUR,
  /** The next attempt after a run that failed, or that another instance was still running. */
  retryAfter: 15 * MINUTE,
} as const

/** Token buckets per user: `capacity` tokens, refilled `capacity` every `refillEvery`. */
export const rateLimitPolicies = {
  /** status, list, request-download, delete, settings and dashboard reads. */
  dashboard: { capacity: 200, refillEvery: 10 * SECOND },
  /** request-upload and complete-upload: stricter than the dashboard policy. */
  backup: { capacity: 10, refillEvery: 60 * SECOND },
} as const

const Timestamp = Type.String({ format: 'date-time' })
const Success = Type.Literal(true)
const BackupId = Type.String({ format: 'uuid' })
/** A relay's backend id: one path segment of the storage key, so no separators and no dot-dot. */
export const BackendId = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^(?!.*\\.\\.)[A-Za-z0-9][A-Za-z0-9._-]*$',
})
/** A file name, never a path. */
export const BackupFilename = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^(?!.*\\.\\.)[^/\\\\\\u0000-\\u001f]+$',
})
const ByteCount = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody }

export const BackupSettings = Type.Object({
  enabled: Type.Boolean(),
  frequency: Type.Enum(backupFrequencies),
  retentionDays: Type.Integer({ minimum: backupLimits.retentionDays.min, maximum: backupLimits.retentionDays.max }),
  includeKeys: Type.Boolean(),
  includeIdentity: Type.Boolean(),
  includeFrameEngine: Type.Boolean(),
  lastBackup: Type.Union([Timestamp, Type.Null()]),
  updatedAt: Timestamp,
})
export type BackupSettings = Static<typeof BackupSettings>

/** Any subset of the settings a user may change. */
export const BackupSettingsChange = Type.Partial(Type.Omit(BackupSettings, ['lastBackup', 'updatedAt']), {
  additionalProperties: false,
  minProperties: 1,
})
export type BackupSettingsChange = Static<typeof BackupSettingsChange>

export const BackupRecord = Type.Object({
  id: BackupId,
  backendId: Type.String(),
  filename: Type.String(),
  s3Key: Type.String(),
  uncompressedSize: ByteCount,
  compressedSize: ByteCount,
  sha256: Type.Union([Type.String(), Type.Null()]),
  status: Type.Enum(backupStatuses),
  createdAt: Timestamp,
  expiresAt: Type.Union([Timestamp, Type.Null()]),
})
export type BackupRecord = Static<typeof BackupRecord>

export const BackupUsage = Type.Object({
  backupCount: Type.Integer(),
  completedCount: Type.Integer(),
  pendingCount: Type.Integer(),
  /** Failed backups, and pending ones past `pendingLapsesAfter` (they can no longer complete). */
  failedCount: Type.Integer(),
  /** Bytes of completed and not yet lapsed pending backups: what the storage quota counts. */
  totalBytes: Type.Integer(),
  maxBackupBytes: Type.Integer(),
  maxTotalBytes: Type.Integer(),
  maxBackups: Type.Integer(),
})
export type BackupUsage = Static<typeof BackupUsage>

export const BackupStatusReply = Type.Object({
  success: Success,
  hasValidLicense: Type.Boolean(),
  settings: BackupSettings,
  usage: BackupUsage,
  /** The newest completed backup. */
  lastBackup: Type.Union([BackupRecord, Type.Null()]),
})
export type BackupStatusReply = Static<typeof BackupStatusReply>

export const UploadRequest = Type.Object(
  {
    filename: BackupFilename,
    backendId: BackendId,
    uncompressedSize: ByteCount,
    compressedSize: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    /**
     * Hex SHA-256 of the file. The upload URL is pinned to it: the store accepts no other body, so a
     * leaked or replayed URL can never put other bytes under the backup's key.
     */
    sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
  },
  { additionalProperties: false },
)
export type UploadRequest = Static<typeof UploadRequest>

export const UploadGrant = Type.Object({
  success: Success,
  backupId: BackupId,
  uploadUrl: Type.String(),
  /** Headers the PUT must carry exactly (Content-Type and the SHA-256 checksum). */
  uploadHeaders: Type.Record(Type.String(), Type.String()),
  s3Key: Type.String(),
  expiresAt: Timestamp,
})
export type UploadGrant = Static<typeof UploadGrant>

export const CompleteUploadRequest = Type.Object(
  { backupId: BackupId, actualCompressedSize: ByteCount },
  { additionalProperties: false },
)
export type CompleteUploadRequest = Static<typeof CompleteUploadRequest>

export const BackupReply = Type.Object({ success: Success, backup: BackupRecord })
export type BackupReply = Static<typeof BackupReply>

export const BackupListQuery = Type.Object(
  {
    backendId: Type.Optional(BackendId),
    limit: Type.Integer({ minimum: 1, maximum: backupLimits.listMax, default: 50 }),
  },
  { additionalProperties: false },
)
export type BackupListQuery = Static<typeof BackupListQuery>

export const BackupList = Type.Object({ success: Success, backups: Type.Array(BackupRecord), total: Type.Integer() })
export type BackupList = Static<typeof BackupList>

export const DownloadGrant = Type.Object({
  success: Success,
  downloadUrl: Type.String(),
  expiresAt: Timestamp,
  filename: Type.String(),
  compressedSize: ByteCount,
  sha256: Type.Union([Type.String(), Type.Null()]),
})
export type DownloadGrant = Static<typeof DownloadGrant>

const BackupParams = Type.Object({ backupId: BackupId })

export const backupStatusRoute = {
  method: 'GET',
  url: '/cloud-backups/status',
  schema: { response: { 200: BackupStatusReply, ...errors } },
} as const

export const backupSettingsRoute = {
  method: 'POST',
  url: '/cloud-backups/settings',
  schema: {
    body: BackupSettingsChange,
    response: { 200: Type.Object({ success: Success, settings: BackupSettings }), ...errors },
  },
} as const

export const requestUploadRoute = {
  method: 'POST',
  url: '/cloud-backups/request-upload',
  schema: { body: UploadRequest, response: { 200: UploadGrant, ...errors } },
} as const

export const completeUploadRoute = {
  method: 'POST',
  url: '/cloud-backups/complete-upload',
  schema: { body: CompleteUploadRequest, response: { 200: BackupReply, ...errors } },
} as const

export const listBackupsRoute = {
  method: 'GET',
  url: '/cloud-backups/list',
  schema: { querystring: BackupListQuery, response: { 200: BackupList, ...errors } },
} as const

export const requestDownloadRoute = {
  method: 'POST',
  url: '/cloud-backups/:backupId/request-download',
  schema: { params: BackupParams, response: { 200: DownloadGrant, ...errors } },
} as const

export const deleteBackupRoute = {
  method: 'DELETE',
  url: '/cloud-backups/:backupId',
  schema: { params: BackupParams, response: { 200: Type.Object({ success: Success }), ...errors } },
} as const
