import { authTimings } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Redis } from '../redis.js'
import type { License } from './service.js'

/** Where license answers are kept for `authTimings.licenseCache`, per user id. */
export interface LicenseCache {
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
}

/**
 * A cache shared by every instance using the same Redis: deleting the key invalidates it everywhere.
 * Left open: a check in one instance that read the database just before another instance's change
 * can write its old answer after that change's delete; it then lives until the entry expires.
 */
export function createRedisLicenseCache({
  redis,
  clock,
  ttl = authTimings.licenseCache,
  prefix = 'relay-cloud:license:',
}: RedisLicenseCacheOptions): LicenseCache {
  const key = (userId: string) => `${prefix}${userId}`
  return {
    async get(userId) {
      const raw = await redis.get(key(userId))
      if (!raw) {
        return undefined
      }
      // Redis drops the key on its own clock; comparing with ours as well keeps expiry exact and testable.
      const { valid, source, expiresAt } = JSON.parse(raw) as License & { expiresAt: number }
      return expiresAt > clock.now().getTime() ? { valid, source } : undefined
    },
    async set(userId, license) {
      const value = JSON.stringify({ ...license, expiresAt: clock.now().getTime() + ttl })
      await redis.set(key(userId), value, 'PX', ttl)
    },
    async delete(userId) {
      await redis.del(key(userId))
    },
    async clear() {
      for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 })) {
        if ((keys as string[]).length > 0) {
          await redis.unlink(...(keys as string[]))
        }
      }
    },
  }
}
