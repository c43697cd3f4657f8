import { backupLimits } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { CloudDB } from '../db/schema.js'
import type { ObjectStore } from '../storage/object-store.js'
import { removeExpired, tryCleanupLock } from './repo.js'

export type CleanupResult = { ran: boolean; expired: number; stalePending: number; total: number }

export type CleanupDeps = {
  db: Kysely<CloudDB>
  store: ObjectStore
  clock: Clock
  log: { info(obj: object, msg: string): void }
}

/**
 * The daily cleanup: backups whose expiry passed and pending ones older than 24 hours go, with
 * their stored files. One instance at a time (a transaction-scoped advisory lock); the records
 * are removed only if their files could be, so a failed run leaves everything for the next one.
 */
export async function cleanupBackups({ db, store, clock, log }: CleanupDeps): Promise<CleanupResult> {
  const now = clock.now()
  const result = await db.transaction().execute(async (trx) => {
    if (!(await tryCleanupLock(trx))) {
      return { ran: false, expired: 0, stalePending: 0, total: 0 }
    }
    const removed = await removeExpired(trx, now, new Date(now.getTime() - backupLimits.stalePendingAfter))
    const keys = [...removed.expired, ...removed.stalePending]
    if (keys.length > 0) {
      await store.delete(keys)
    }
    const expired = removed.expired.length
    const stalePending = removed.stalePending.length
    return { ran: true, expired, stalePending, total: expired + stalePending }
  })
  if (result.ran) {
    log.info(
      { expired: result.expired, stalePending: result.stalePending, total: result.total },
      'backup cleanup finished',
    )
  } else {
    log.info({}, 'backup cleanup skipped: another instance is running it')
  }
  return result
}
