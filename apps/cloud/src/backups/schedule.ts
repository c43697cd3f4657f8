import { cleanupWorker } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { CloudDB } from '../db/schema.js'
import type { ObjectStore } from '../storage/object-store.js'
import { backupJobs, type CleanupDeps, cleanupBackups, releaseLapsedBackups } from './cleanup.js'
import { lastRunOf } from './repo.js'

export type BackupJobDeps = {
  db: Kysely<CloudDB>
  store: ObjectStore
  clock: Clock
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void }
  /** Called after each run that changed something (drops cached status reads). */
  afterRun?: () => void
}

type Job = { name: string; interval: number; run: (deps: CleanupDeps) => Promise<{ ran: boolean }> }

const jobs: Job[] = [
  { name: backupJobs.cleanup, interval: cleanupWorker.interval, run: cleanupBackups },
  { name: backupJobs.release, interval: cleanupWorker.releaseInterval, run: releaseLapsedBackups },
]

/**
 * Starts the backup jobs on this instance. Each runs at once when its last recorded run (in the
 * database, whichever instance made it) is older than its interval, and then an interval after its
 * last run: a restart never postpones a job, and N instances run it once per interval between them.
 * A run that failed, or that another instance was still running, is tried again after `retryAfter`.
 * `stop()` cancels the timers and waits for a run under way.
 */
export function scheduleBackupJobs({ db, store, clock, log, afterRun }: BackupJobDeps) {
  const timers = new Set<NodeJS.Timeout>()
  const running = new Set<Promise<void>>()
  let stopped = false

  async function tick(job: Job) {
    try {
      const result = await job.run({ db, store, clock, log, onlyIfDue: true })
      if (result.ran) {
        afterRun?.()
      }
    } catch (err) {
      log.error({ err, job: job.name }, 'backup job failed')
    }
    if (stopped) {
      return
    }
    let delay = cleanupWorker.retryAfter
    try {
      const last = await lastRunOf(db, job.name)
      const untilDue = last ? last.getTime() + job.interval - clock.now().getTime() : 0
      if (untilDue > 0) {
        delay = Math.min(untilDue, job.interval)
      }
    } catch (err) {
      log.error({ err, job: job.name }, 'backup job could not read its last run')
    }
    schedule(job, delay)
  }

  function schedule(job: Job, delay: number) {
    if (stopped) {
      return
    }
    log.info(
      { job: job.name, nextRunAt: new Date(clock.now().getTime() + delay).toISOString() },
      'backup job scheduled',
    )
    const timer = setTimeout(() => {
      timers.delete(timer)
      const run = tick(job).finally(() => running.delete(run))
      running.add(run)
    }, delay)
    // A pending job never keeps the process alive on its own.
    timer.unref()
    timers.add(timer)
  }

  for (const job of jobs) {
    const run = tick(job).finally(() => running.delete(run))
    running.add(run)
  }

  return {
    async stop() {
      stopped = true
      for (const timer of timers) {
        clearTimeout(timer)
      }
      timers.clear()
      await Promise.all(running)
    },
  }
}

export type BackupJobSchedule = ReturnType<typeof scheduleBackupJobs>
