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

/** Quotas, checked in this order on request-upload; counted over pending and completed backups. */
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

export const cleanupWorker = {
  firstRunAfter: DAY,
  interval: DAY,
} as const

/** Token buckets per user: `capacity` tokens, refilled `capacity` every `refillEvery`. */
export const rateLimitPolicies = {
  /** status, list, request-download, delete, settings and dashboard reads. */
  dashboard: { capacity: 200, refillEvery: 10 * SECOND },
  /** request-upload and complete-upload: stricter than the dashboard policy. */
  backup: { capacity: 10, refillEvery: 60 * SECOND },
} as const
