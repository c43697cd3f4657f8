import { rmSync } from 'node:fs'
import {
  AppError,
  type BackupOperation,
  type BackupSettingsChange,
  type BackupTrigger,
  cloudNotAuthenticatedMessage,
  licenseRequiredMessage,
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
  restore: Omit<RestoreDeps, 'database' | 'dataDir' | 'tempDir' | 'cloudBackups' | 'log'>
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err))

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
  const skipLog = createSkipLog(log)
  let running: Promise<void> | undefined

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

  async function backup(operation: BackupOperation, components: BackupComponentFlags): Promise<void> {
    let file: string | undefined
    try {
      operations.stage(operation, 'snapshot')
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
      operations.stage(operation, 'uploading', archive.size)
      await uploadFile(grant.uploadUrl, grant.uploadHeaders, archive.file, archive.size, (done) =>
        operations.progress(operation, done),
      )
      operations.stage(operation, 'confirming')
      await cloudBackups.completeUpload(grant.backupId, archive.size)
      operations.finish(operation)
      log.info({ backupId: grant.backupId, bytes: archive.size, trigger: operation.trigger }, 'backup uploaded')
      await notifications.notify('databaseBackupSuccess', {
        message: `Backup ${archive.filename} (${formatBytes(archive.size)}) is stored in the cloud`,
      })
    } catch (err) {
      const message = messageOf(err)
      operations.finish(operation, message)
      log.error({ err, stage: operation.stage, backupId: operation.backupId }, 'backup failed')
      await notifications.notify('databaseBackupFailure', { message: `The backup failed: ${message}` })
    } finally {
      if (file) {
        rmSync(file, { force: true })
      }
    }
  }

  return {
    operations,

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
            { ...deps.restore, database, dataDir, tempDir, cloudBackups, log },
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

    /** Resolves when the backup or restore in progress (if any) has finished. */
    idle: async (): Promise<void> => {
      await running
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
