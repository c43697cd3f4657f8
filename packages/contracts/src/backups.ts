import { type Static, Type } from 'typebox'
import { backupFrequencies, backupLimits, backupStatuses, cloudBackupUrls } from './backups.plain.js'
import { routesOf } from './endpoint.js'
import { ErrorBody } from './errors.js'

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
    /** Skips this many of the newest: the next page starts where the last one ended. */
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: backupLimits.listOffsetMax })),
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

const cloudBackupSchemas = {
  backupStatus: { response: { 200: BackupStatusReply, ...errors } },
  backupSettings: {
    body: BackupSettingsChange,
    response: { 200: Type.Object({ success: Success, settings: BackupSettings }), ...errors },
  },
  requestUpload: { body: UploadRequest, response: { 200: UploadGrant, ...errors } },
  completeUpload: { body: CompleteUploadRequest, response: { 200: BackupReply, ...errors } },
  listBackups: { querystring: BackupListQuery, response: { 200: BackupList, ...errors } },
  requestDownload: { params: BackupParams, response: { 200: DownloadGrant, ...errors } },
  deleteBackup: { params: BackupParams, response: { 200: Type.Object({ success: Success }), ...errors } },
} as const
export type CloudBackupSchemas = typeof cloudBackupSchemas
export const cloudBackupRoutes = routesOf(cloudBackupUrls, cloudBackupSchemas)

export const backupStatusRoute = cloudBackupRoutes.backupStatus
export const backupSettingsRoute = cloudBackupRoutes.backupSettings
export const requestUploadRoute = cloudBackupRoutes.requestUpload
export const completeUploadRoute = cloudBackupRoutes.completeUpload
export const listBackupsRoute = cloudBackupRoutes.listBackups
export const requestDownloadRoute = cloudBackupRoutes.requestDownload
export const deleteBackupRoute = cloudBackupRoutes.deleteBackup
