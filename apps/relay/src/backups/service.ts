import { rmSync } from 'node:fs'
import {
  AppError,
  type BackupOperation,
  type BackupSettingsChange,
  type BackupTrigger,
  backupLimits,
  cloudNotAuthenticatedMessage,
  licenseRequiredMessage,
  type OperationStage,
  type RestoreBody,
} from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { CloudConnectionService } from '../cloud-client/connection.js'
import type { RelayDatabase } from '../db/database.js'
import type { NotificationService } from '../notifications/service.js'
import { type BackupComponentFlags, createBackupArchive } from './archive/index.js'
import { createCloudBackups } from './cloud-backups.js'
import { createOperations } from './operations.js'
import { type RestoreDeps, restoreBackup } from './restore.js'
import { createSkipLog, isBackupDue } from './scheduler.js'
import { uploadFile } from './transfer.js'
import { createUnfinishedOperations, type UnfinishedOperation } from './unfinished.js'

export type BackupServiceDeps = {
  database: RelayDatabase
  dataDir: string
  /** Temp files of backups and restores: inside the data folder, cleared at start. */
  tempDir: string
  backendId: string
  appVersion: string
  schemaVersion: string
  cloud: CloudConnectionService
  notifications: NotificationService
  clock: Clock
  log: FastifyBaseLogger
  restore: Omit<RestoreDeps, 'database' | 'dataDir' | 'tempDir' | 'cloudBackups' | 'unfinished' | 'log'>
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err))

/** What a backup was doing in each stage, for the report of one the relay was stopped in. */
const stageWords: Partial<Record<OperationStage, string>> = {
  queued: 'before it began',
  snapshot: 'while copying the database',
  packing: 'while packing the archive',
  uploading: 'while uploading it to the cloud',
  confirming: 'while the cloud confirmed the upload',
}

/**
 * Cloud backups of this relay: the backup itself (snapshot, pack, upload, confirm), the scheduler's
 * cycle, restores, and the calls the UI makes to the cloud through the relay. One backup or restore
 * runs at a time, whoever started it.
 */
export function createBackupService(deps: BackupServiceDeps) {
  const { database, dataDir, tempDir, backendId, cloud, notifications, clock } = deps
  const log = deps.log
  const cloudBackups = createCloudBackups(cloud)
  const operations = createOperations(clock)
  const unfinished = createUnfinishedOperations({ db: database.db, clock })
  const skipLog = createSkipLog(log)
  let running: Promise<void> | undefined
  let releasing: Promise<void> | undefined
  /** Interrupted operations whose failed release was logged already: a cloud that stays away is logged once. */
  const releaseWarned = new Set<string>()

  /** Runs `work` as the one operation in progress; its promise settles when the work does. */
  function exclusive(work: () => Promise<void>): Promise<void> {
    const done = work().finally(() => {
      running = undefined
    })
    running = done
    return done
  }

  function refuseWhileBusy() {
    if (running) {
      throw new AppError('CONFLICT', 'A backup or restore is already running; wait for it to finish')
    }
  }

  async function requireSession() {
    if (!(await cloud.storedSession())) {
      throw new AppError('CLOUD_NOT_AUTHENTICATED', cloudNotAuthenticatedMessage)
    }
  }

  /** Moves the operation on, on disk too: a crash after this point is known to have been in `stage`. */
  async function moveTo(operation: BackupOperation, stage: OperationStage, bytesTotal?: number): Promise<void> {
    operations.stage(operation, stage, bytesTotal)
    await unfinished.update(operation)
  }

  async function backup(operation: BackupOperation, components: BackupComponentFlags): Promise<void> {
    let file: string | undefined
    try {
      operations.stage(operation, 'snapshot')
      await unfinished.begin(operation)
      const archive = await createBackupArchive({
        databaseFile: database.file,
        dataDir,
        tempDir,
        backendId,
        appVersion: deps.appVersion,
        schemaVersion: deps.schemaVersion,
        createdAt: clock.now(),
        components,
        onProgress: ({ stage, bytesDone, bytesTotal }) => {
          if (operation.stage !== stage) {
            operations.stage(operation, stage, bytesTotal)
            unfinished.update(operation).catch((err: unknown) => log.warn({ err }, 'backup stage not saved'))
          }
          operations.progress(operation, bytesDone, bytesTotal)
        },
      })
      file = archive.file
      operation.filename = archive.filename
      const grant = await cloudBackups.requestUpload({
        filename: archive.filename,
        backendId,
        uncompressedSize: archive.uncompressedSize,
        compressedSize: archive.size,
        sha256: archive.sha256,
      })
      operation.backupId = grant.backupId
      // Saved before a byte is sent: from here on, a crash leaves a cloud record to release.
      await moveTo(operation, 'uploading', archive.size)
      await uploadFile(grant.uploadUrl, grant.uploadHeaders, archive.file, archive.size, (done) =>
        operations.progress(operation, done),
      )
      await moveTo(operation, 'confirming')
      await cloudBackups.completeUpload(grant.backupId, archive.size)
      await unfinished.end(operation.id)
      operations.finish(operation)
      log.info({ backupId: grant.backupId, bytes: archive.size, trigger: operation.trigger }, 'backup uploaded')
      await notifications.notify('databaseBackupSuccess', {
        message: `Backup ${archive.filename} (${formatBytes(archive.size)}) is stored in the cloud`,
      })
    } catch (err) {
      const message = messageOf(err)
      // Ended as well: the failure is reported below, not again at the next start.
      await unfinished.end(operation.id).catch((error: unknown) => log.warn({ err: error }, 'backup end not saved'))
      operations.finish(operation, message)
      log.error({ err, stage: operation.stage, backupId: operation.backupId }, 'backup failed')
      await notifications.notify('databaseBackupFailure', { message: `The backup failed: ${message}` })
    } finally {
      if (file) {
        rmSync(file, { force: true })
      }
    }
  }

  /**
   * Releases the cloud record of one interrupted backup, so it holds no quota. One the cloud may have
   * confirmed before the relay stopped is looked up first: a completed backup is kept, never deleted.
   */
  async function release(row: UnfinishedOperation, backupId: string): Promise<void> {
    if (row.stage === 'confirming') {
      const { backups } = await cloudBackups.list({ backendId, limit: backupLimits.listMax })
      if (backups.find((record) => record.id === backupId)?.status === 'completed') {
        await unfinished.end(row.id)
        log.info({ backupId }, 'the cloud had confirmed the interrupted backup; it is kept')
        return
      }
    }
    try {
      await cloudBackups.remove(backupId)
    } catch (err) {
      // Gone already (the cloud's cleanup, or a user): nothing is left to release.
      if (!(err instanceof AppError && err.code === 'NOT_FOUND')) {
        throw err
      }
    }
    await unfinished.end(row.id)
    log.info({ operationId: row.id, backupId }, 'released the cloud record of an interrupted backup')
  }

  async function releaseAll(): Promise<void> {
    for (const row of await unfinished.awaitingRelease()) {
      const backupId = row.backup_id ?? ''
      try {
        await release(row, backupId)
      } catch (err) {
        if (!releaseWarned.has(row.id)) {
          releaseWarned.add(row.id)
          log.warn(
            { operationId: row.id, backupId, error: messageOf(err) },
            'the cloud record of an interrupted backup is not released yet; retrying at the next scheduler cycle',
          )
        }
      }
    }
  }

  /** Releases what interrupted backups left at the cloud; never throws, a failed release is kept for later. */
  function releaseInterrupted(): Promise<void> {
    releasing ??= releaseAll()
      .catch((err: unknown) => log.error({ err }, 'interrupted backups could not be read'))
      .finally(() => {
        releasing = undefined
      })
    return releasing
  }

  return {
    operations,

    /**
     * At start, before any backup runs: each backup the relay was stopped in is recorded as failed and
     * reported. Its cloud record is released by `releaseInterrupted`, which needs the cloud.
     */
    async recoverInterrupted(): Promise<void> {
      for (const row of await unfinished.unseen()) {
        const error = `The backup was interrupted: the relay stopped ${stageWords[row.stage] ?? `in stage ${row.stage}`}`
        operations.add({
          id: row.id,
          kind: row.kind,
          trigger: row.trigger,
          stage: 'failed',
          bytesDone: 0,
          bytesTotal: 0,
          backupId: row.backup_id,
          filename: row.filename,
          error,
          startedAt: row.started_at,
          finishedAt: clock.now().toISOString(),
        })
        log.warn({ operationId: row.id, stage: row.stage, backupId: row.backup_id }, 'found an interrupted backup')
        // Reported before it is marked: a crash in between reports it twice rather than never.
        await notifications.notify('databaseBackupFailure', { message: error })
        if (row.backup_id) {
          await unfinished.markInterrupted(row.id)
        } else {
          await unfinished.end(row.id)
        }
      }
    },

    releaseInterrupted,

    /** POST /create: checks what can be told at once, then runs the backup in the background. */
    async startBackup(trigger: BackupTrigger = 'manual'): Promise<BackupOperation> {
      refuseWhileBusy()
      await requireSession()
      const status = await cloudBackups.status()
      if (!status.hasValidLicense) {
        throw new AppError('LICENSE_REQUIRED', licenseRequiredMessage)
      }
      refuseWhileBusy()
      const operation = operations.start('backup', trigger)
      void exclusive(() => backup(operation, status.settings))
      return operation
    },

    /**
     * One cycle of the scheduler: back up when signed in, licensed, enabled and due. Every reason to
     * skip is logged when it first occurs, not every 15 minutes.
     */
    async runScheduledCycle(): Promise<'ran' | 'skipped'> {
      await releaseInterrupted()
      if (running) {
        skipLog.skipped('busy')
        return 'skipped'
      }
      let status: Awaited<ReturnType<typeof cloudBackups.status>>
      try {
        if (!(await cloud.tokens.getAccessToken())) {
          skipLog.skipped('no-session')
          return 'skipped'
        }
        status = await cloudBackups.status()
      } catch (err) {
        if (err instanceof AppError && err.code === 'CLOUD_NOT_AUTHENTICATED') {
          skipLog.skipped('no-session')
        } else {
          skipLog.skipped('cloud-unreachable', { error: messageOf(err) })
        }
        return 'skipped'
      }
      if (!status.hasValidLicense) {
        skipLog.skipped('no-license')
        return 'skipped'
      }
      if (!status.settings.enabled) {
        skipLog.skipped('disabled')
        return 'skipped'
      }
      if (!isBackupDue(status.settings.lastBackup, status.settings.frequency, clock.now())) {
        skipLog.skipped('not-due', { lastBackup: status.settings.lastBackup, frequency: status.settings.frequency })
        return 'skipped'
      }
      if (running) {
        skipLog.skipped('busy')
        return 'skipped'
      }
      skipLog.ran()
      const operation = operations.start('backup', 'scheduled')
      await exclusive(() => backup(operation, status.settings))
      return 'ran'
    },

    async startRestore(backupId: string, body: RestoreBody = {}): Promise<BackupOperation> {
      refuseWhileBusy()
      await requireSession()
      const operation = operations.start('restore', null)
      operation.backupId = backupId
      void exclusive(async () => {
        try {
          await restoreBackup(
            { ...deps.restore, database, dataDir, tempDir, cloudBackups, unfinished, log },
            operation,
            operations,
            body,
          )
          operations.finish(operation)
          await notifications.notify('databaseBackupSuccess', {
            title: 'Backup restored',
            message: `The relay now runs on backup ${operation.filename ?? backupId}`,
          })
        } catch (err) {
          operations.finish(operation, messageOf(err))
          log.error({ err, backupId }, 'restore failed; the relay still runs on its own database')
          await notifications.notify('databaseBackupFailure', {
            title: 'Restore failed',
            message: `Nothing was changed: ${messageOf(err)}`,
          })
        }
      })
      return operation
    },

    getOperation(id: string): BackupOperation {
      const operation = operations.get(id)
      if (!operation) {
        throw new AppError('NOT_FOUND', `Operation ${id} not found`)
      }
      return operation
    },

    /** Resolves when the backup or restore in progress (if any), and any release, has finished. */
    idle: async (): Promise<void> => {
      await Promise.all([running, releasing])
    },

    status: () => cloudBackups.status(),
    saveSettings: (change: BackupSettingsChange) => cloudBackups.saveSettings(change),
    list: (query: { limit: number; allRelays: boolean }) =>
      cloudBackups.list({ limit: query.limit, backendId: query.allRelays ? undefined : backendId }),
    requestDownload: (backupId: string) => cloudBackups.requestDownload(backupId),
    remove: (backupId: string) => cloudBackups.remove(backupId),
  }
}

export type BackupService = ReturnType<typeof createBackupService>

function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) {
    return `${(bytes / 1024).toFixed(0)} kB`
  }
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}
