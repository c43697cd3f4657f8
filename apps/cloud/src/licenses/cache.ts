import { authTimings } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import { type Redis, type RedisLog, redisTimings, redisUse } from '../redis.js'
import type { License } from './types.js'

/** Where license answers are kept for `authTimings.licenseCache`, per user id. */
export interface LicenseCache {
  /** Shared by every instance (Redis): each change deletes the one entry all of them read. */
  readonly shared?: boolean
  get(userId: string): Promise<License | undefined>
  set(userId: string, license: License): Promise<void>
  delete(userId: string): Promise<void>
  /** Forgets every entry, e.g. after changes from other processes may have been missed. */
  clear(): Promise<void>
}

export type MemoryLicenseCacheOptions = {
  clock: Clock
  ttl?: number
  /** When full, the oldest entry makes room: memory stays bounded however many users check in. */
  maxEntries?: number
}

/** A per-process cache; other processes' changes reach it through the license service's listener. */
export function createMemoryLicenseCache({
  clock,
  ttl = authTimings.licenseCache,
  maxEntries = 10_000,
}: MemoryLicenseCacheOptions): LicenseCache {
  // A Map iterates in insertion order, and `set` re-inserts, so the first key is the oldest entry.
  const entries = new Map<string, { license: License; expiresAt: number }>()
  return {
    async get(userId) {
      const entry = entries.get(userId)
      if (entry && entry.expiresAt <= clock.now().getTime()) {
        entries.delete(userId)
        return undefined
      }
      return entry?.license
    },
    async set(userId, license) {
      entries.delete(userId)
      while (entries.size > 0 && entries.size >= maxEntries) {
        entries.delete(entries.keys().next().value as string)
      }
      entries.set(userId, { license, expiresAt: clock.now().getTime() + ttl })
    },
    async delete(userId) {
      entries.delete(userId)
    },
    async clear() {
      entries.clear()
    },
  }
}

export type RedisLicenseCacheOptions = {
  redis: Redis
  clock: Clock
  ttl?: number
  prefix?: string
  log?: RedisLog
  /** How many users with an unconfirmed invalidation are remembered one by one; beyond, all are distrusted. */
  maxUnsure?: number
  /** How long Redis is left alone after a failure, ms. */
  pauseAfterFailure?: number
}

/**
 * A cache shared by every instance using the same Redis: deleting the key invalidates it everywhere.
 * Left open: a check in one instance that read the database just before another instance's change
 * can write its old answer after that change's delete; it then lives until the entry expires.
 *
 * Redis failing is a cache miss: answers come from the database. A delete that fails may leave an old
 * answer in Redis for up to `ttl`, so the user's id is remembered for that long: this process skips the
 * cache for them, and deletes the key again as soon as Redis answers (at once when the connection comes
 * back). Every instance hearing of the change (the license service's listener) does the same, so the old
 * answer is read again only if all of them stop before Redis is back, and never longer than `ttl`.
 */
export function createRedisLicenseCache({
  redis,
  clock,
  ttl = authTimings.licenseCache,
  prefix = 'relay-cloud:license:',
  log,
  maxUnsure = 10_000,
  pauseAfterFailure = redisTimings.pauseAfterFailure,
}: RedisLicenseCacheOptions): LicenseCache {
  const key = (userId: string) => `${prefix}${userId}`
  const use = redisUse('license cache', 'licenses are read from the database', log, pauseAfterFailure)
  // Deleting again has pauses of its own: Redis refusing only writes must not stop the cache's reads.
  const retry = redisUse('license cache invalidation', 'retrying', undefined, pauseAfterFailure)
  // User id → until when its entry may be stale (ms by `clock`).
  const unsure = new Map<string, number>()
  // Set when a clear failed or too many deletes did: every entry may be stale until then.
  let unsureOfAllUntil: number | undefined
  let settling: Promise<void> | undefined
  let waitingForReady = false

  const now = () => clock.now().getTime()

  function distrusted(userId: string): boolean {
    return (unsureOfAllUntil ?? 0) > now() || (unsure.get(userId) ?? 0) > now()
  }

  function pending(): boolean {
    // Entries are (re)inserted with ever later times, so the expired ones come first.
    for (const [userId, until] of unsure) {
      if (until > now()) {
        break
      }
      unsure.delete(userId)
    }
    if (unsureOfAllUntil !== undefined && unsureOfAllUntil <= now()) {
      unsureOfAllUntil = undefined
    }
    return unsure.size > 0 || unsureOfAllUntil !== undefined
  }

  function remember(userId: string | undefined) {
    const until = now() + ttl
    if (userId !== undefined && (unsure.has(userId) || unsure.size < maxUnsure)) {
      unsure.delete(userId)
      unsure.set(userId, until)
    } else {
      unsure.clear()
      unsureOfAllUntil = until
    }
    if (!waitingForReady) {
      // Only while something is owed, so that many caches on one connection add no lasting listeners.
      waitingForReady = true
      redis.once('ready', () => {
        waitingForReady = false
        use.resume()
        retry.resume()
        void settle()
      })
    }
  }

  async function removeAll() {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 })) {
      if ((keys as string[]).length > 0) {
        await redis.unlink(...(keys as string[]))
      }
    }
  }

  /** Deletes again what could not be deleted before; failures stay remembered. */
  function settle(): Promise<void> {
    if (!pending() || !retry.available()) {
      return Promise.resolve()
    }
    settling ??= (async () => {
      try {
        if (unsureOfAllUntil !== undefined) {
          await retry.run(removeAll)
          unsureOfAllUntil = undefined
          unsure.clear()
        } else {
          const userIds = [...unsure.keys()]
          await retry.run(() => redis.unlink(...userIds.map(key)))
          for (const userId of userIds) {
            unsure.delete(userId)
          }
        }
      } catch {
        // Still owed; the next call or the next reconnection tries again.
      } finally {
        settling = undefined
      }
    })()
    return settling
  }

  return {
    shared: true,
    async get(userId) {
      // In the background: a read must not wait for writes that may be what is failing.
      void settle()
      if (distrusted(userId)) {
        return undefined
      }
      const raw = await use.run(() => redis.get(key(userId))).catch(() => null)
      if (!raw) {
        return undefined
      }
      // Redis drops the key on its own clock; comparing with ours as well keeps expiry exact and testable.
      const { valid, source, expiresAt } = JSON.parse(raw) as License & { expiresAt: number }
      return expiresAt > now() ? { valid, source } : undefined
    },
    async set(userId, license) {
      if (distrusted(userId)) {
        return
      }
      const value = JSON.stringify({ ...license, expiresAt: now() + ttl })
      await use.run(() => redis.set(key(userId), value, 'PX', ttl)).catch(() => {})
    },
    async delete(userId) {
      try {
        await use.run(() => redis.del(key(userId)))
        unsure.delete(userId)
      } catch {
        remember(userId)
      }
    },
    async clear() {
      try {
        await use.run(removeAll)
        unsure.clear()
        unsureOfAllUntil = undefined
      } catch {
        remember(undefined)
      }
    },
  }
}
