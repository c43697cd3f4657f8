import { AppError } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely, Transaction } from 'kysely'
import type { CloudDatabase } from '../db/database.js'
import type { CloudDB } from '../db/schema.js'
import { createUserDirectory, isUuid } from '../directory/service.js'
import type { LicenseCache } from './cache.js'
import * as repo from './repo.js'
import type { License } from './types.js'

/** The payment provider's subscription statuses; only `active` grants a license. */
export const subscriptionStatuses = [
  'active',
  'trialing',
  'past_due',
  'unpaid',
  'canceled',
  'incomplete',
  'incomplete_expired',
  'paused',
] as const

/** NOTIFY channel carrying the id of a user whose license inputs changed. */
export const licenseChangedChannel = 'license_changed'

export type SubscriptionInput = repo.SubscriptionValues

export type LicenseDeps = {
  db: Kysely<CloudDB>
  clock: Clock
  cache: LicenseCache
  log?: FastifyBaseLogger
  /**
   * Follows changes made by other processes (other instances, the admin CLI) to drop their users
   * from a per-process cache. A shared cache, whose key every change deletes, needs it only for the
   * deletes that failed: every listening process then deletes the key again, or skips it until it can.
   */
  listen?: CloudDatabase['listen']
  /** How long to wait before listening again after the connection was lost, ms. */
  relistenDelay?: number
}

/** Writes made inside `change()`: every user they touch is notified and invalidated once they commit. */
export type LicenseChanges = {
  trx: Transaction<CloudDB>
  setGifted(userId: string, gifted: boolean): Promise<void>
  upsertSubscription(sub: SubscriptionInput): Promise<void>
}

const noLicense: License = { valid: false, source: null }

/**
 * License checks (a gifted flag in the user's metadata, else an `active` subscription), cached per
 * user, and the only writer of what they depend on, so that every change invalidates at once.
 */
export function createLicenseService({ db, clock, cache, log, listen, relistenDelay = 5000 }: LicenseDeps) {
  const directory = createUserDirectory({ db })
  // Bumped by every invalidation: a check that read the database before one must not cache its answer.
  let generation = 0
  // With a listener, a per-process cache is trusted only while it is connected: a missed notification means
  // a stale entry. A shared cache does not depend on it: the process making a change deletes the entry.
  const independent = !listen || cache.shared === true
  let following = independent
  let stopListening: (() => Promise<void>) | undefined
  let retry: NodeJS.Timeout | undefined
  let attempt: Promise<void> = Promise.resolve()
  let closed = false

  async function invalidate(userId: string): Promise<void> {
    generation++
    await cache.delete(userId)
  }

  async function follow(): Promise<void> {
    if (!listen || closed) {
      return
    }
    try {
      const stop = await listen(
        licenseChangedChannel,
        (userId) => {
          invalidate(userId).catch((err) => log?.error({ err, userId }, 'license cache invalidation failed'))
        },
        lost,
      )
      if (closed) {
        await stop()
        return
      }
      stopListening = stop
      if (!independent) {
        generation++
        await cache.clear()
      }
      following = true
    } catch (err) {
      lost(err as Error)
    }
  }

  function lost(err: Error) {
    following = independent
    stopListening?.().catch(() => {})
    stopListening = undefined
    if (!closed) {
      const meanwhile = independent ? 'changes elsewhere rely on their own deletes' : 'checks bypass the cache'
      log?.warn({ err }, `license change listener lost; ${meanwhile} until it is back`)
      retry = setTimeout(() => {
        attempt = follow()
      }, relistenDelay)
      retry.unref()
    }
  }

  attempt = follow()

  async function change<T>(work: (changes: LicenseChanges) => Promise<T>): Promise<T> {
    const touched = new Set<string>()
    const result = await db.transaction().execute(async (trx) => {
      const result = await work({
        trx,
        async setGifted(userId, gifted) {
          // null removes the key: an ungifted user's metadata looks like one never gifted.
          const patch = { giftedLicense: gifted ? true : null }
          if (!(await directory.mergeMetadata(userId, patch, { now: clock.now(), trx }))) {
            throw new AppError('NOT_FOUND', `No user ${userId}`)
          }
          touched.add(userId)
        },
        async upsertSubscription(sub) {
          const previous = await repo.findSubscription(trx, sub.provider, sub.subscriptionId)
          await repo.upsertSubscription(trx, sub, clock.now())
          if (previous) {
            touched.add(previous.user_id)
          }
          touched.add(sub.userId)
        },
      })
      // Listeners hear it when this transaction commits, and never if it rolls back.
      for (const userId of touched) {
        await repo.notifyChannel(trx, licenseChangedChannel, userId)
      }
      return result
    })
    for (const userId of touched) {
      await invalidate(userId)
    }
    return result
  }

  return {
    async check(userId: string): Promise<License> {
      if (!isUuid(userId)) {
        return noLicense
      }
      const useCache = following
      const seen = generation
      if (useCache) {
        const cached = await cache.get(userId).catch((err) => {
          log?.warn({ err }, 'license cache unavailable; reading the database')
        })
        if (cached) {
          return cached
        }
      }
      const facts = await repo.findLicenseFacts(db, userId)
      const license: License = facts?.gifted
        ? { valid: true, source: 'gifted' }
        : facts?.subscribed
          ? { valid: true, source: 'subscription' }
          : noLicense
      if (useCache && following && seen === generation) {
        await cache.set(userId, license).catch((err) => log?.warn({ err }, 'license cache unavailable'))
      }
      return license
    },

    invalidate,
    change,

    setGifted(userId: string, gifted: boolean): Promise<void> {
      return change((changes) => changes.setGifted(userId, gifted))
    },

    upsertSubscription(sub: SubscriptionInput): Promise<void> {
      return change((changes) => changes.upsertSubscription(sub))
    },

    findUserIdByCustomer(provider: string, customerId: string): Promise<string | undefined> {
      return repo.findUserIdByCustomer(db, provider, customerId)
    },

    findSubscription(provider: string, subscriptionId: string) {
      return repo.findSubscription(db, provider, subscriptionId)
    },

    /** Resolves once the first attempt to listen has finished (at once without a listener). */
    ready(): Promise<void> {
      return attempt
    },

    async close(): Promise<void> {
      closed = true
      clearTimeout(retry)
      await attempt
      await stopListening?.().catch(() => {})
      stopListening = undefined
    },
  }
}

export type LicenseService = ReturnType<typeof createLicenseService>
