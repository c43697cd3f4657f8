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
import { encryptBuiltArchive } from './archive/encryption.js'
import { type BackupArchive, type BackupComponentFlags, packBackupArchive } from './archive/index.js'
import { createCloudBackups } from './cloud-backups.js'
import { createOperations } from './operations.js'
import type { BackupPassphrase } from './passphrase.js'
import { type RestoreDeps, restoreBackup } from './restore.js'
import { createRetention } from './retention/index.js'
import { createSkipLog, isBackupDue } from './scheduler.js'
import { uploadFile } from './transfer.js'
import { createLastContent, type LastContent, volatileTables } from './unchanged.js'
import { createUnfinishedOperations, type UnfinishedOperation } from './unfinished.js'
import { createBackupVerification } from './verification/service.js'

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
  /** Set: each backup is encrypted with it before it leaves the relay. */
  passphrase: BackupPassphrase
  restore: Omit<RestoreDeps, 'database' | 'dataDir' | 'tempDir' | 'cloudBackups' | 'unfinished' | 'passphrase' | 'log'>
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
  const retention = createRetention({ cloudBackups, db: database.db, clock, backendId, log })
  const operations = createOperations(clock)
  const unfinished = createUnfinishedOperations({ db: database.db, clock })
  const lastContent = createLastContent(clock)
  const skipLog = createSkipLog(log)
  let running: Promise<unknown> | undefined
  let releasing: Promise<void> | undefined
  /** Interrupted operations whose failed release was logged already: a cloud that stays away is logged once. */
  const releaseWarned = new Set<string>()

  /** Runs `work` as the one operation in progress; its promise settles when the work does. */
  function exclusive<T>(work: () => Promise<T>): Promise<T> {
    const done = work().finally(() => {
      running = undefined
    })
    running = done
    return done
  }

  function refuseWhileBusy() {
    if (running) {
      throw new AppError('CONFLICT', 'A backup, restore or verification is already running; wait for it to finish')
    }
  }

  async function requireSession() {
    if (!(await cloud.storedSession())) {
      throw new AppError('CLOUD_NOT_AUTHENTICATED', cloudNotAuthenticatedMessage)
    }
  }

  const verification = createBackupVerification({
    db: database.db,
    clock,
    log,
    notifications,
    cloudBackups,
    operations,
    tempDir,
    backendId,
    knownSchemaVersions: deps.restore.knownSchemaVersions,
    passphrase: deps.passphrase,
    slot: { isBusy: () => running !== undefined, refuseWhileBusy, requireSession, exclusive },
  })

  /** Moves the operation on, on disk too: a crash after this point is known to have been in `stage`. */
  async function moveTo(operation: BackupOperation, stage: OperationStage, bytesTotal?: number): Promise<void> {
    operations.stage(operation, stage, bytesTotal)
    await unfinished.update(operation)
  }

  /**
   * Backs up with `components`. A scheduled backup given `unchangedSince` (what the newest stored backup
   * holds) is dropped, and logged as skipped, when it would store the same content again.
   */
  async function backup(
    operation: BackupOperation,
    components: BackupComponentFlags,
    unchangedSince?: LastContent,
  ): Promise<'stored' | 'unchanged' | 'failed'> {
    let file: string | undefined
    try {
      operations.stage(operation, 'snapshot')
      await unfinished.begin(operation)
      // Read before the snapshot: the whole backup follows the passphrase in force when it began.
      const { passphrase, setAt: passphraseSetAt } = await deps.passphrase.inForce()
      const packed = await packBackupArchive({
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
        // Scheduled backups only: fingerprinting reads the database once more.
        fingerprint: operation.trigger === 'scheduled' && {
          volatileTables,
          unchangedSince: unchangedSince?.passphraseSetAt === passphraseSetAt ? unchangedSince.fingerprint : undefined,
        },
      })
      if ('unchanged' in packed) {
        lastContent.unchanged()
        await unfinished.end(operation.id)
        operations.drop(operation)
        skipLog.skipped('unchanged', { backupId: unchangedSince?.backupId })
        return 'unchanged'
      }
      // The snapshot's integrity check may still be running: it gates the confirmation, not the upload.
      const { checked, fingerprint } = packed
      let archive: BackupArchive = packed
      file = archive.file
      if (passphrase !== undefined) {
        archive = await encryptBuiltArchive(archive, passphrase)
        file = archive.file
      }
      operation.filename = archive.filename
      await retention.makeRoom(archive.size)
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
      const checkFailed = new AbortController()
      checked.catch((err: unknown) => checkFailed.abort(err))
      await Promise.all([
        uploadFile(
          grant.uploadUrl,
          grant.uploadHeaders,
          archive.file,
          archive.size,
          (done) => operations.progress(operation, done),
          checkFailed.signal,
        ),
        checked,
      ])
      await moveTo(operation, 'confirming')
      await cloudBackups.completeUpload(grant.backupId, archive.size)
      await unfinished.end(operation.id)
      if (fingerprint) {
        lastContent.uploaded({ fingerprint, passphraseSetAt, backupId: grant.backupId })
      }
      await retention.applyPolicy()
      operations.finish(operation)
      log.info(
        {
          backupId: grant.backupId,
          bytes: archive.size,
          trigger: operation.trigger,
          stageMs: operations.stageTimes(operation),
        },
        'backup uploaded',
      )
      await notifications.notify('databaseBackupSuccess', {
        message: `Backup ${archive.filename} (${formatBytes(archive.size)}) is stored in the cloud`,
      })
      return 'stored'
    } catch (err) {
      const message = messageOf(err)
      // Ended as well: the failure is reported below, not again at the next start.
      await unfinished.end(operation.id).catch((error: unknown) => log.warn({ err: error }, 'backup end not saved'))
      operations.finish(operation, message)
      log.error({ err, stage: operation.stage, backupId: operation.backupId }, 'backup failed')
      await notifications.notify('databaseBackupFailure', { message: `The backup failed: ${message}` })
      return 'failed'
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

  /**
   * The scheduler's backup: back up when signed in, licensed, enabled and due. Every reason to
   * skip is logged when it first occurs, not every 15 minutes.
   */
  async function scheduledBackup(): Promise<'ran' | 'skipped'> {
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
    // What the newest stored backup holds, when this relay made it: the same content is not stored twice.
    const last = lastContent.get()
    const unchangedSince = last?.backupId === status.lastBackup?.id ? last : undefined
    const unchangedAt = unchangedSince?.unchangedAt ?? null
    if (!isBackupDue(status.settings.lastBackup, status.settings.frequency, clock.now(), unchangedAt)) {
      skipLog.skipped('not-due', { lastBackup: status.settings.lastBackup, frequency: status.settings.frequency })
      return 'skipped'
    }
    if (running) {
      skipLog.skipped('busy')
      return 'skipped'
    }
    skipLog.ran()
    const operation = operations.start('backup', 'scheduled')
    const outcome = await exclusive(() => backup(operation, status.settings, unchangedSince))
    return outcome === 'unchanged' ? 'skipped' : 'ran'
  }

  return {
    operations,
    retention,
    verification,

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
     * One cycle of the scheduler: the backup when one is due, then the verification when one is due.
     * Every reason to skip either is logged when it first occurs, not every 15 minutes.
     */
    async runScheduledCycle(): Promise<'ran' | 'skipped'> {
      const outcome = await scheduledBackup()
      await verification.runScheduled()
      return outcome
    },

    async startRestore(backupId: string, body: RestoreBody = {}): Promise<BackupOperation> {
      refuseWhileBusy()
      await requireSession()
      const operation = operations.start('restore', null)
      operation.backupId = backupId
      void exclusive(async () => {
        try {
          await restoreBackup(
            { ...deps.restore, database, dataDir, tempDir, cloudBackups, unfinished, passphrase: deps.passphrase, log },
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
    list: async (query: { limit: number; allRelays: boolean }) =>
      verification.annotate(
        await cloudBackups.list({ limit: query.limit, backendId: query.allRelays ? undefined : backendId }),
      ),
    requestDownload: (backupId: string) => cloudBackups.requestDownload(backupId),
    async remove(backupId: string): Promise<void> {
      await cloudBackups.remove(backupId)
      await verification.forget(backupId)
    },
  }
}

export type BackupService = ReturnType<typeof createBackupService>

function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) {
    return `${(bytes / 1024).toFixed(0)} kB`
  }
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}
