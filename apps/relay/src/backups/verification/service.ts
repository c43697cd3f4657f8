import { randomUUID } from 'node:crypto'
import { mkdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import {
  AppError,
  type BackupList,
  type BackupOperation,
  type BackupTrigger,
  backupLimits,
  type RelayBackupList,
  type VerificationOverview,
  type VerificationSettings,
} from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../../db/schema.js'
import type { NotificationService } from '../../notifications/service.js'
import type { CloudBackups } from '../cloud-backups.js'
import { fetchVerifiedBackup } from '../fetch-backup.js'
import type { Operations } from '../operations.js'
import type { BackupPassphrase } from '../passphrase.js'
import { isVerificationDue, nextVerificationDue } from './due.js'
import { backupName, describeFailure, failureMessage } from './failure.js'
import {
  type BackupVerificationRow,
  deleteVerification,
  deleteVerificationsExcept,
  findLatestVerification,
  findVerifications,
  saveVerification,
} from './repo.js'
import { createVerificationSettings } from './settings.js'

/** The backup service's one slot for an operation: a verification waits for, and blocks, backups and restores. */
export type OperationSlot = {
  isBusy(): boolean
  /** Throws CONFLICT while an operation runs. */
  refuseWhileBusy(): void
  /** Throws CLOUD_NOT_AUTHENTICATED when the relay holds no cloud session. */
  requireSession(): Promise<void>
  /** Runs `work` as the one operation in progress. */
  exclusive(work: () => Promise<void>): Promise<void>
}

export type BackupVerificationDeps = {
  db: Kysely<RelayDB>
  clock: Clock
  log: FastifyBaseLogger
  notifications: NotificationService
  cloudBackups: CloudBackups
  operations: Operations
  slot: OperationSlot
  /** Work folders go here, under the archive code's prefix, so the startup cleanup removes what a stop left. */
  tempDir: string
  backendId: string
  /** Migrations this relay knows: a backup made by a newer relay cannot be checked. */
  knownSchemaVersions: readonly string[]
  /** Opens the relay's encrypted backups. */
  passphrase: Pick<BackupPassphrase, 'get'>
}

export type VerificationSkip =
  | 'off'
  | 'not-due'
  | 'busy'
  | 'no-session'
  | 'cloud-unreachable'
  | 'no-license'
  | 'no-backup'

const skipMessages = {
  off: 'verification is turned off',
  'not-due': 'no verification is due yet',
  busy: 'another backup, restore or verification is running',
  'no-session': 'the relay is not signed in to the cloud',
  'cloud-unreachable': 'the cloud could not be reached',
  'no-license': 'the cloud account has no valid Pro license',
  'no-backup': 'this relay has no completed backup to verify',
} as const satisfies Record<VerificationSkip, string>

/** What a backup was made at, when the caller knows it: names it in the failure notification. */
type Target = { backupId: string; createdAt?: string }

const markOf = ({ outcome, verified_at, checked_at, error }: BackupVerificationRow) => ({
  outcome,
  verifiedAt: verified_at,
  checkedAt: checked_at,
  error,
})

/**
 * Verification of cloud backups: a backup is downloaded into a temp folder and proven whole (size and
 * SHA-256 against the cloud's record, manifest, every entry, integrity_check), the relay untouched.
 * Runs on demand and from the scheduler's cycle; each result is kept per backup, a failure notified.
 */
export function createBackupVerification(deps: BackupVerificationDeps) {
  const { db, clock, log, notifications, cloudBackups, operations, slot, backendId } = deps
  const settings = createVerificationSettings({ db, clock })
  let lastSkip: VerificationSkip | undefined

  /** Logs why a scheduled verification did not run when the reason first occurs, not every cycle. */
  function skipped(reason: VerificationSkip, detail: object = {}): 'skipped' {
    if (reason !== lastSkip) {
      log.info({ reason, ...detail }, `scheduled verification skipped: ${skipMessages[reason]}`)
      lastSkip = reason
    }
    return 'skipped'
  }

  async function check(operation: BackupOperation, backupId: string): Promise<void> {
    const work = path.join(deps.tempDir, `relay-backup-verify-${randomUUID()}`)
    mkdirSync(work, { recursive: true, mode: 0o700 })
    try {
      await fetchVerifiedBackup(
        { cloudBackups, operations, knownSchemaVersions: deps.knownSchemaVersions },
        operation,
        backupId,
        work,
        { passphrase: await deps.passphrase.get() },
      )
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  }

  async function run(operation: BackupOperation, target: Target): Promise<void> {
    const { backupId } = target
    try {
      await check(operation, backupId)
      const checkedAt = clock.now().toISOString()
      await saveVerification(db, {
        backup_id: backupId,
        outcome: 'ok',
        verified_at: checkedAt,
        checked_at: checkedAt,
        error: null,
      })
      operations.finish(operation)
      log.info({ backupId, filename: operation.filename }, 'backup verified: it can be restored')
    } catch (err) {
      if (err instanceof AppError && err.code === 'NOT_FOUND') {
        // Deleted since it was chosen: there is nothing left to verify, or to report.
        await deleteVerification(db, backupId)
        operations.finish(operation, 'The cloud no longer has this backup.')
        return
      }
      const failure = describeFailure(err)
      await saveVerification(db, {
        backup_id: backupId,
        outcome: 'failed',
        verified_at: null,
        checked_at: clock.now().toISOString(),
        error: failure.reason,
      })
      operations.finish(operation, `${failure.reason}. ${failure.advice}`)
      log.error({ err, backupId, stage: operation.stage }, 'backup verification failed')
      const name = backupName({ createdAt: target.createdAt, filename: operation.filename, backupId })
      await notifications.notify('backupVerificationFailure', { message: failureMessage(name, failure) })
    }
  }

  function begin(target: Target, trigger: BackupTrigger): BackupOperation {
    const operation = operations.start('verify', trigger)
    operation.backupId = target.backupId
    return operation
  }

  /** This relay's newest completed backup; the account's complete list, when it fits a page, prunes the rows. */
  async function newestBackup(): Promise<BackupList['backups'][number] | undefined> {
    const own = await cloudBackups.list({ backendId, limit: backupLimits.listMax })
    const account = await cloudBackups.list({ limit: backupLimits.listMax })
    if (account.backups.length >= account.total) {
      await deleteVerificationsExcept(
        db,
        account.backups.map((backup) => backup.id),
      )
    }
    return own.backups.find((backup) => backup.status === 'completed')
  }

  async function overview(): Promise<VerificationOverview> {
    const current = await settings.get()
    const last = await findLatestVerification(db)
    const nextDue = nextVerificationDue(current.frequency, last?.checked_at ?? null, clock.now())
    return {
      success: true,
      settings: current,
      lastRun: last ? { backupId: last.backup_id, ...markOf(last) } : null,
      nextDueAt: nextDue?.toISOString() ?? null,
    }
  }

  return {
    /**
     * POST /:backupId/verify. An unknown or unfinished backup is refused at once (404, 409); an
     * unreachable cloud is left to the run, which records and reports it like any other failure.
     */
    async start(backupId: string): Promise<BackupOperation> {
      slot.refuseWhileBusy()
      await slot.requireSession()
      const grant = await cloudBackups.requestDownload(backupId).catch((err: unknown) => {
        if (!(err instanceof AppError && err.code === 'UNAVAILABLE')) {
          throw err
        }
        return undefined
      })
      slot.refuseWhileBusy()
      const operation = begin({ backupId }, 'manual')
      operation.filename = grant?.filename ?? null
      void slot.exclusive(() => run(operation, { backupId }))
      return operation
    },

    /**
     * The scheduler's part, at the end of each cycle: verifies this relay's newest completed backup
     * when a check is due and nothing else runs. Every reason to skip is logged once.
     */
    async runScheduled(): Promise<'ran' | 'skipped'> {
      const { frequency } = await settings.get()
      if (frequency === 'off') {
        return skipped('off')
      }
      const last = await findLatestVerification(db)
      if (!isVerificationDue(frequency, last?.checked_at ?? null, clock.now())) {
        return skipped('not-due', { lastCheckedAt: last?.checked_at, frequency })
      }
      if (slot.isBusy()) {
        return skipped('busy')
      }
      let newest: Awaited<ReturnType<typeof newestBackup>>
      try {
        newest = await newestBackup()
      } catch (err) {
        const code = err instanceof AppError ? err.code : undefined
        if (code === 'CLOUD_NOT_AUTHENTICATED') {
          return skipped('no-session')
        }
        if (code === 'LICENSE_REQUIRED') {
          return skipped('no-license')
        }
        return skipped('cloud-unreachable', { error: err instanceof Error ? err.message : String(err) })
      }
      if (!newest) {
        return skipped('no-backup')
      }
      if (slot.isBusy()) {
        return skipped('busy')
      }
      lastSkip = undefined
      const target = { backupId: newest.id, createdAt: newest.createdAt }
      const operation = begin(target, 'scheduled')
      await slot.exclusive(() => run(operation, target))
      return 'ran'
    },

    overview,

    async saveSettings(next: VerificationSettings): Promise<VerificationOverview> {
      await settings.save(next)
      return overview()
    },

    /** The cloud's list with what the relay found when it last verified each backup. */
    async annotate(list: BackupList): Promise<RelayBackupList> {
      const rows = await findVerifications(
        db,
        list.backups.map((backup) => backup.id),
      )
      const byId = new Map(rows.map((row) => [row.backup_id, markOf(row)]))
      return {
        ...list,
        backups: list.backups.map((backup) => ({ ...backup, verification: byId.get(backup.id) ?? null })),
      }
    },

    /** Drops the record of a backup the relay deleted. */
    forget: (backupId: string): Promise<void> => deleteVerification(db, backupId),
  }
}

export type BackupVerification = ReturnType<typeof createBackupVerification>
