import { endpoint } from './endpoint.js'
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
  /** The furthest a list page may start: beyond any account's records, which the quotas and the cleanup bound. */
  listOffsetMax: 100_000,
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

/** The cloud's backup endpoints, which relays call with their token. */
export const cloudBackupUrls = {
  backupStatus: endpoint('GET', '/cloud-backups/status'),
  backupSettings: endpoint('POST', '/cloud-backups/settings'),
  requestUpload: endpoint('POST', '/cloud-backups/request-upload'),
  completeUpload: endpoint('POST', '/cloud-backups/complete-upload'),
  listBackups: endpoint('GET', '/cloud-backups/list'),
  requestDownload: endpoint('POST', '/cloud-backups/:backupId/request-download'),
  deleteBackup: endpoint('DELETE', '/cloud-backups/:backupId'),
}
