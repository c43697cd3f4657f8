import {
  AppError,
  type BackupRecord,
  backupLimits,
  type KeepPolicy,
  type KeepPolicyChange,
  type RetentionReply,
} from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../../db/schema.js'
import type { CloudBackups } from '../cloud-backups.js'
import { createKeepPolicy } from './keep-policy.js'
import { keptByPolicy, newestFirst } from './policy.js'
import { projectRetention } from './projection.js'
import { type DeletionReason, deletionReasons, fitNewBackup, type StoredBackup } from './quota-fit.js'

export type RetentionDeps = {
  cloudBackups: Pick<CloudBackups, 'status' | 'list' | 'remove'>
  db: Kysely<RelayDB>
  clock: Clock
  backendId: string
  log: FastifyBaseLogger
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err))

/** Why the reply holds no projection, for each way the cloud can fail to tell the usage. */
function reasonWithoutProjection(err: AppError): string {
  switch (err.code) {
    case 'CLOUD_NOT_AUTHENTICATED':
      return "Connect the relay to Relay Cloud to see how many backups fit in the account's quota."
    case 'LICENSE_REQUIRED':
      return "Cloud backups need a Pro license; with one, this shows how many backups fit in the account's quota."
    case 'UNAVAILABLE':
      return `Relay Cloud cannot tell how much of the quota is used right now (${err.message}); try again later.`
    default:
      return `Relay Cloud did not tell how much of the quota is used: ${err.message}`
  }
}

/**
 * The keep policy of this relay's cloud backups at work: before an upload it deletes what the quota
 * needs gone, after one what the policy does not keep, and it projects how many backups fit.
 */
export function createRetention({ cloudBackups, db, clock, backendId, log }: RetentionDeps) {
  const keepPolicy = createKeepPolicy({ db, clock })

  /** This relay's completed backups, every page of them: the policy needs the oldest as well. */
  async function completedBackups(): Promise<BackupRecord[]> {
    const found: BackupRecord[] = []
    for (let offset = 0; ; offset += backupLimits.listMax) {
      const page = await cloudBackups.list({ backendId, limit: backupLimits.listMax, offset })
      found.push(...page.backups)
      if (page.backups.length < backupLimits.listMax || found.length >= page.total) {
        return found.filter((backup) => backup.status === 'completed')
      }
    }
  }

  async function remove(backup: StoredBackup, reason: DeletionReason): Promise<void> {
    try {
      await cloudBackups.remove(backup.id)
    } catch (err) {
      // Deleted meanwhile (by a user, or the cloud's cleanup): gone is what was wanted.
      if (!(err instanceof AppError && err.code === 'NOT_FOUND')) {
        throw err
      }
    }
    log.info({ backupId: backup.id, filename: backup.filename, reason }, 'deleted a cloud backup')
  }

  async function withProjection(policy: KeepPolicy): Promise<RetentionReply> {
    try {
      const [status, backups] = await Promise.all([cloudBackups.status(), completedBackups()])
      const projection = projectRetention({
        usage: status.usage,
        backups,
        policy,
        frequency: status.settings.frequency,
        now: clock.now(),
      })
      return { success: true, policy, projection, reason: null }
    } catch (err) {
      if (!(err instanceof AppError)) {
        throw err
      }
      return { success: true, policy, projection: null, reason: reasonWithoutProjection(err) }
    }
  }

  return {
    /**
     * Before an upload: deletes this relay's backups until an archive of `archiveBytes` passes the
     * cloud's quotas, or throws the quota error whose message says what to change.
     */
    async makeRoom(archiveBytes: number): Promise<void> {
      const [status, backups, policy] = await Promise.all([cloudBackups.status(), completedBackups(), keepPolicy.get()])
      const fit = fitNewBackup({ usage: status.usage, backups, policy, archiveBytes })
      if (!fit.fits) {
        throw new AppError(fit.code, fit.sentence)
      }
      for (const { backup, reason } of fit.deletions) {
        await remove(backup, reason)
      }
      const keptOnes = fit.deletions.filter((deletion) => deletion.reason === deletionReasons.keptByPolicy)
      if (keptOnes.length > 0) {
        log.warn(
          { deleted: keptOnes.length },
          'the keep policy keeps more backups than the quota holds: backups it keeps were deleted to make room',
        )
      }
    },

    /**
     * After a backup: deletes this relay's completed backups the policy does not keep, never the
     * newest. Never throws: what is left is deleted after the next backup.
     */
    async applyPolicy(): Promise<void> {
      try {
        const [backups, policy] = await Promise.all([completedBackups(), keepPolicy.get()])
        const kept = keptByPolicy(backups, policy)
        const [, ...older] = newestFirst(backups)
        for (const backup of older.reverse()) {
          if (!kept.has(backup.id)) {
            await remove(backup, deletionReasons.outsidePolicy)
          }
        }
      } catch (err) {
        log.warn({ error: messageOf(err) }, 'backups outside the keep policy not deleted; the next backup tries again')
      }
    },

    /** GET /retention: the policy, and the projection when the cloud can tell the usage. */
    async overview(): Promise<RetentionReply> {
      return withProjection(await keepPolicy.get())
    },

    /** PUT /retention: saves the change, then answers like `overview`. */
    async update(change: KeepPolicyChange): Promise<RetentionReply> {
      return withProjection(await keepPolicy.update(change))
    },
  }
}

export type Retention = ReturnType<typeof createRetention>
