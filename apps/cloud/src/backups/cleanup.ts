import { backupLimits, cleanupWorker, DAY, pendingLapsesAfter } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely, Transaction } from 'kysely'
import type { CloudDB } from '../db/schema.js'
import type { ObjectStore } from '../storage/object-store.js'
import { failLapsedPending, lastRunOf, recentFailedKeys, recordRun, removeExpired, tryJobLock } from './repo.js'

/** The jobs' names: their rows in `cleanup_runs` and their advisory locks. */
export const backupJobs = { cleanup: 'backup_cleanup', release: 'backup_release' } as const

/**
 * How long the files of failed backups are deleted again by each release run: a delete that failed
 * when the backup failed is retried, and so is a file put back through an upload URL that an external
 * S3 store honours until it lapses. Past this, the daily cleanup removes the file with its record.
 */
export const failedFilesRetriedFor = DAY

export type CleanupResult = { ran: boolean; expired: number; stalePending: number; total: number }
export type ReleaseResult = { ran: boolean; released: number }

export type CleanupDeps = {
  db: Kysely<CloudDB>
  store: ObjectStore
  clock: Clock
  log: { info(obj: object, msg: string): void }
  /** Skip the run when the job's last recorded run is more recent than its interval (scheduled runs). */
  onlyIfDue?: boolean
}

type Skipped = { ran: false; reason: 'locked' | 'not due' }

/**
 * Runs `work` under the job's transaction-scoped advisory lock (one instance at a time) and records
 * the run in the same transaction: a run that throws leaves neither its changes nor its record, so
 * the job stays due. The due check is made under the lock, so an instance that waited for another's
 * run sees it. The stored files `work` names are deleted before its changes commit: records go only
 * if their files could.
 */
async function runJob<T>(
  { db, store, clock, onlyIfDue }: CleanupDeps,
  job: { name: string; interval: number },
  work: (trx: Transaction<CloudDB>, now: Date) => Promise<{ keys: string[]; value: T }>,
): Promise<Skipped | { ran: true; value: T }> {
  const now = clock.now()
  return db.transaction().execute(async (trx) => {
    if (!(await tryJobLock(trx, job.name))) {
      return { ran: false, reason: 'locked' } as const
    }
    if (onlyIfDue) {
      const last = await lastRunOf(trx, job.name)
      if (last && now.getTime() - last.getTime() < job.interval) {
        return { ran: false, reason: 'not due' } as const
      }
    }
    const { keys, value } = await work(trx, now)
    if (keys.length > 0) {
      await store.delete(keys)
    }
    await recordRun(trx, job.name, now)
    return { ran: true, value } as const
  })
}

/**
 * The daily cleanup: backups whose expiry passed and pending ones older than 24 hours go, with
 * their stored files. The records are removed only if their files could be, so a failed run leaves
 * everything for the next one.
 */
export async function cleanupBackups(deps: CleanupDeps): Promise<CleanupResult> {
  const job = { name: backupJobs.cleanup, interval: cleanupWorker.interval }
  const outcome = await runJob(deps, job, async (trx, now) => {
    const removed = await removeExpired(trx, now, new Date(now.getTime() - backupLimits.stalePendingAfter))
    return {
      keys: [...removed.expired, ...removed.stalePending],
      value: { expired: removed.expired.length, stalePending: removed.stalePending.length },
    }
  })
  if (!outcome.ran) {
    if (outcome.reason === 'locked') {
      deps.log.info({}, 'backup cleanup skipped: another instance is running it')
    }
    return { ran: false, expired: 0, stalePending: 0, total: 0 }
  }
  const { expired, stalePending } = outcome.value
  const total = expired + stalePending
  deps.log.info({ expired, stalePending, total }, 'backup cleanup finished')
  return { ran: true, expired, stalePending, total }
}

/**
 * The hourly release: pending backups past their upload window and its grace are marked failed and
 * their files (if any arrived) deleted, with the files of recently failed backups again. The quotas
 * stopped counting these backups when they lapsed; this makes their state and the store agree.
 */
export async function releaseLapsedBackups(deps: CleanupDeps): Promise<ReleaseResult> {
  const job = { name: backupJobs.release, interval: cleanupWorker.releaseInterval }
  const outcome = await runJob(deps, job, async (trx, now) => {
    const released = await failLapsedPending(trx, new Date(now.getTime() - pendingLapsesAfter))
    const failed = await recentFailedKeys(trx, new Date(now.getTime() - failedFilesRetriedFor))
    return { keys: [...new Set([...released, ...failed])], value: released.length }
  })
  if (!outcome.ran) {
    return { ran: false, released: 0 }
  }
  if (outcome.value > 0) {
    deps.log.info({ released: outcome.value }, 'lapsed pending backups released')
  }
  return { ran: true, released: outcome.value }
}
