import { randomUUID } from 'node:crypto'
import {
  AppError,
  type BackupListQuery,
  type BackupRecord,
  type BackupSettings,
  type BackupSettingsChange,
  type BackupStatusReply,
  backupLimits,
  backupQuota,
  type CompleteUploadRequest,
  DAY,
  type DownloadGrant,
  licenseRequiredMessage,
  pendingLapsesAfter,
  quotaReasons,
  type UploadGrant,
  type UploadRequest,
} from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { CloudDB } from '../db/schema.js'
import type { LicenseService } from '../licenses/service.js'
import type { ObjectStore } from '../storage/object-store.js'
import { createRecentFacts } from './recent-facts.js'
import * as repo from './repo.js'
import { storageKey } from './storage-key.js'

export type BackupDeps = {
  db: Kysely<CloudDB>
  clock: Clock
  store: ObjectStore
  licenses: Pick<LicenseService, 'check'>
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void }
}

/** What a user has before saving any settings. Keys stay local unless chosen: a backup then holds only ciphertext. */
export const defaultSettings: Omit<repo.SettingsRow, 'user_id' | 'updated_at'> = {
  enabled: false,
  frequency: 'daily',
  retention_days: backupLimits.retentionDays.default,
  include_keys: false,
  include_identity: true,
  include_frame_engine: true,
  last_backup: null,
}

const presignSeconds = backupLimits.presignedUrlValidity / 1000

/** Pending backups created before this moment are past their upload window and its grace. */
function lapsedBefore(now: Date): Date {
  return new Date(now.getTime() - pendingLapsesAfter)
}

export function createBackupService({ db, clock, store, licenses, log }: BackupDeps) {
  const recent = createRecentFacts((userId) => repo.statusFacts(db, userId, lapsedBefore(clock.now())), clock)
  async function requireLicense(userId: string): Promise<void> {
    if (!(await licenses.check(userId)).valid) {
      throw new AppError('LICENSE_REQUIRED', licenseRequiredMessage)
    }
  }

  /** A user's saved settings, or what they have before saving any. */
  function orDefaults(row: repo.SettingsRow | undefined, userId: string): repo.SettingsRow {
    return row ?? { ...defaultSettings, user_id: userId, updated_at: clock.now() }
  }

  async function settingsOf(userId: string): Promise<repo.SettingsRow> {
    return orDefaults(await repo.findSettings(db, userId), userId)
  }

  async function checkOwnership(userId: string, backendId: string, claim: boolean): Promise<void> {
    const owner = claim
      ? await repo.claimBackend(db, backendId, userId, clock.now())
      : await repo.findOwner(db, backendId)
    if (owner !== undefined && owner !== userId) {
      throw new AppError('BACKEND_OWNED_BY_OTHER', `Backend ${backendId} belongs to another account`)
    }
  }

  /**
   * Fails a pending backup and deletes its file at once, so neither quota nor store keeps it. The
   * store may be down: the hourly release job deletes the files of recently failed backups again.
   */
  async function fail(userId: string, backup: repo.BackupRow, problem: string): Promise<void> {
    await recent.after(userId, repo.updateBackup(db, backup.id, { status: 'failed' }))
    log.warn({ backupId: backup.id, problem }, 'backup upload not accepted')
    try {
      await store.delete([backup.s3_key])
    } catch (err) {
      log.warn({ backupId: backup.id, err }, 'file of a failed backup not deleted; the release job retries')
    }
  }

  async function ownBackup(userId: string, backupId: string): Promise<repo.BackupRow> {
    const backup = await repo.findBackup(db, userId, backupId)
    if (!backup) {
      throw new AppError('NOT_FOUND', 'No such backup')
    }
    return backup
  }

  return {
    /** Forgets every status read held here (the cleanup removed backups of many users). */
    forgetRecent: () => recent.forgetAll(),

    /** Polled by every relay and UI: the stored facts come from `recent`, the license answer from its own cache. */
    async status(userId: string): Promise<BackupStatusReply> {
      const [license, facts] = await Promise.all([licenses.check(userId), recent.get(userId)])
      const { usage } = facts
      return {
        success: true,
        hasValidLicense: license.valid,
        settings: toSettings(orDefaults(facts.settings, userId)),
        usage: {
          backupCount: usage.pending + usage.completed + usage.failed,
          completedCount: usage.completed,
          pendingCount: usage.pending,
          failedCount: usage.failed,
          totalBytes: usage.bytes,
          ...backupQuota,
        },
        lastBackup: facts.newest ? toRecord(facts.newest) : null,
      }
    },

    /** Saves a change; a license is needed to end up enabled (turning backups off never needs one). */
    async updateSettings(userId: string, change: BackupSettingsChange): Promise<BackupSettings> {
      const current = await settingsOf(userId)
      const enabled = change.enabled ?? current.enabled
      if (enabled) {
        await requireLicense(userId)
      }
      const saved = await recent.after(
        userId,
        repo.saveSettings(db, {
          ...current,
          enabled,
          frequency: change.frequency ?? current.frequency,
          retention_days: change.retentionDays ?? current.retention_days,
          include_keys: change.includeKeys ?? current.include_keys,
          include_identity: change.includeIdentity ?? current.include_identity,
          include_frame_engine: change.includeFrameEngine ?? current.include_frame_engine,
          updated_at: clock.now(),
        }),
      )
      return toSettings(saved)
    },

    /**
     * Checks the quotas in the spec's order and reserves the space in one transaction, under the
     * user's row lock: concurrent requests (on any instance) queue here and see each other's rows.
     */
    async requestUpload(userId: string, request: UploadRequest): Promise<UploadGrant> {
      await requireLicense(userId)
      await checkOwnership(userId, request.backendId, true)
      if (request.compressedSize > backupQuota.maxBackupBytes) {
        throw new AppError('QUOTA_BACKUP_SIZE', quotaReasons.QUOTA_BACKUP_SIZE)
      }
      const now = clock.now()
      const { retention_days } = await settingsOf(userId)
      const id = randomUUID()
      const key = storageKey({
        userId,
        backendId: request.backendId,
        date: now,
        backupId: id,
        filename: request.filename,
      })
      const backup = await recent.after(
        userId,
        db.transaction().execute(async (trx) => {
          if (!(await repo.lockUser(trx, userId))) {
            throw new AppError('UNAUTHORIZED', 'The account of this token no longer exists')
          }
          const usage = await repo.usageOf(trx, userId, lapsedBefore(now))
          if (usage.bytes + request.compressedSize > backupQuota.maxTotalBytes) {
            throw new AppError('QUOTA_STORAGE', quotaReasons.QUOTA_STORAGE)
          }
          if (usage.count >= backupQuota.maxBackups) {
            throw new AppError('QUOTA_COUNT', quotaReasons.QUOTA_COUNT)
          }
          return repo.insertBackup(trx, {
            id,
            user_id: userId,
            backend_id: request.backendId,
            filename: request.filename,
            s3_key: key,
            uncompressed_size: request.uncompressedSize,
            compressed_size: request.compressedSize,
            sha256: request.sha256.toLowerCase(),
            status: 'pending',
            created_at: now,
            expires_at: new Date(now.getTime() + retention_days * DAY),
          })
        }),
      )
      const upload = await store.presignUpload(key, {
        contentLength: request.compressedSize,
        sha256: request.sha256.toLowerCase(),
        expiresInSeconds: presignSeconds,
      })
      return {
        success: true,
        backupId: backup.id,
        uploadUrl: upload.url,
        uploadHeaders: upload.headers,
        s3Key: key,
        expiresAt: upload.expiresAt.toISOString(),
      }
    },

    /**
     * Confirms an upload against what the store holds; a mismatch fails the backup for good, and so
     * does a confirmation after the upload window and its grace (the quotas no longer count it).
     */
    async completeUpload(
      userId: string,
      { backupId, actualCompressedSize }: CompleteUploadRequest,
    ): Promise<BackupRecord> {
      await requireLicense(userId)
      const backup = await ownBackup(userId, backupId)
      if (backup.status !== 'pending') {
        throw new AppError('CONFLICT', `Backup is ${backup.status}, not pending`)
      }
      if (backup.created_at < lapsedBefore(clock.now())) {
        await fail(userId, backup, 'its upload window has closed')
        throw new AppError('CONFLICT', 'Upload not accepted: its upload window has closed; request a new upload')
      }
      const stored = await store.head(backup.s3_key)
      const expected = Number(backup.compressed_size)
      const problem = !stored
        ? 'no uploaded file was found'
        : stored.size !== actualCompressedSize || stored.size !== expected
          ? `the uploaded file has ${stored.size} bytes, ${actualCompressedSize} were reported and ${expected} announced`
          : backup.sha256 && stored.sha256 && stored.sha256 !== backup.sha256
            ? 'the uploaded file does not match its SHA-256'
            : undefined
      if (problem) {
        await fail(userId, backup, problem)
        throw new AppError('UPLOAD_MISMATCH', `Upload not accepted: ${problem}`)
      }
      const completed = await recent.after(
        userId,
        db.transaction().execute(async (trx) => {
          const row = await repo.updateBackup(trx, backup.id, { status: 'completed' })
          await repo.setLastBackup(trx, userId, clock.now(), { ...defaultSettings, updated_at: clock.now() })
          return row
        }),
      )
      return toRecord(completed)
    },

    async list(userId: string, query: BackupListQuery) {
      await requireLicense(userId)
      if (query.backendId) {
        await checkOwnership(userId, query.backendId, false)
      }
      const { rows, total } = await repo.listBackups(db, userId, query)
      return { success: true as const, backups: rows.map(toRecord), total }
    },

    async requestDownload(userId: string, backupId: string): Promise<DownloadGrant> {
      await requireLicense(userId)
      const backup = await ownBackup(userId, backupId)
      await checkOwnership(userId, backup.backend_id, false)
      if (backup.status !== 'completed') {
        throw new AppError('CONFLICT', `Backup is ${backup.status}; only completed backups can be downloaded`)
      }
      const download = await store.presignDownload(backup.s3_key, {
        expiresInSeconds: presignSeconds,
        filename: backup.filename,
      })
      return {
        success: true,
        downloadUrl: download.url,
        expiresAt: download.expiresAt.toISOString(),
        filename: backup.filename,
        compressedSize: Number(backup.compressed_size),
        sha256: backup.sha256,
      }
    },

    /**
     * Whether the object store may take a body for `key`: only while its backup waits for that upload.
     * A completed backup is never overwritten, and a removed one never comes back as an orphan file.
     */
    async acceptsUpload(key: string): Promise<boolean> {
      return (await repo.findStatusByKey(db, key)) === 'pending'
    },

    /**
     * Removes the record and its stored file, whatever its status: a relay releases an interrupted
     * upload this way (a pending one), which frees its quota at once. The file goes first, so a
     * failed delete leaves the record to delete again.
     */
    async remove(userId: string, backupId: string): Promise<void> {
      await requireLicense(userId)
      const backup = await ownBackup(userId, backupId)
      await checkOwnership(userId, backup.backend_id, false)
      await store.delete([backup.s3_key])
      await recent.after(userId, repo.deleteBackup(db, userId, backupId))
    },
  }
}

export type BackupService = ReturnType<typeof createBackupService>

export function toSettings(row: repo.SettingsRow): BackupSettings {
  return {
    enabled: row.enabled,
    frequency: row.frequency,
    retentionDays: row.retention_days,
    includeKeys: row.include_keys,
    includeIdentity: row.include_identity,
    includeFrameEngine: row.include_frame_engine,
    lastBackup: row.last_backup?.toISOString() ?? null,
    updatedAt: row.updated_at.toISOString(),
  }
}

export function toRecord(row: repo.BackupRow): BackupRecord {
  return {
    id: row.id,
    backendId: row.backend_id,
    filename: row.filename,
    s3Key: row.s3_key,
    uncompressedSize: Number(row.uncompressed_size),
    compressedSize: Number(row.compressed_size),
    sha256: row.sha256,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
  }
}
