import { randomUUID } from 'node:crypto'
import { authTimings } from '@relay/contracts'
import { createTestClock, freePort, type TestClock } from '@relay/testkit'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  connectTestRedis,
  deadRedisUrl,
  type OwnRedis,
  redisRequirement,
  startOwnRedis,
  uniqueRedisPrefix,
} from '../../test/redis.js'
import { closeRedis, connectRedis, type Redis } from '../redis.js'
import { createMemoryLicenseCache, createRedisLicenseCache, type LicenseCache } from './cache.js'

const gifted = { valid: true, source: 'gifted' } as const
const none = { valid: false, source: null } as const
const fourHours = authTimings.licenseCache

describe('memory license cache', () => {
  let clock: TestClock
  let cache: LicenseCache

  beforeEach(() => {
    clock = createTestClock()
    cache = createMemoryLicenseCache({ clock })
  })

  it('keeps an answer until exactly 4 hours have passed', async () => {
    await cache.set('u1', gifted)
    clock.advance(fourHours - 1)
    expect(await cache.get('u1')).toEqual(gifted)
    clock.advance(1)
    expect(await cache.get('u1')).toBeUndefined()
  })

  it('forgets a deleted or cleared entry', async () => {
    await cache.set('u1', gifted)
    await cache.set('u2', none)
    await cache.delete('u1')
    expect(await cache.get('u1')).toBeUndefined()
    expect(await cache.get('u2')).toEqual(none)
    await cache.clear()
    expect(await cache.get('u2')).toBeUndefined()
  })

  it('drops the oldest entry when full', async () => {
    const small = createMemoryLicenseCache({ clock, maxEntries: 2 })
    await small.set('a', gifted)
    await small.set('b', gifted)
    await small.set('a', none) // refreshed: now b is the oldest
    await small.set('c', gifted)
    expect(await small.get('b')).toBeUndefined()
    expect(await small.get('a')).toEqual(none)
    expect(await small.get('c')).toEqual(gifted)
  })
})

describe.skipIf(!redisRequirement.available)('redis license cache', () => {
  let redis: Redis
  let clock: TestClock
  let prefix: string
  let cache: LicenseCache

  beforeAll(() => {
    redis = connectTestRedis()
  })

  afterAll(async () => {
    await redis?.quit()
  })

  beforeEach(() => {
    clock = createTestClock()
    prefix = uniqueRedisPrefix()
    cache = createRedisLicenseCache({ redis, clock, prefix })
  })

  afterEach(async () => {
    await cache.clear()
  })

  it('stores JSON under the prefix with a 4 hour expiry in Redis', async () => {
    const userId = randomUUID()
    await cache.set(userId, gifted)
    expect(JSON.parse((await redis.get(`${prefix}${userId}`)) ?? 'null')).toMatchObject(gifted)
    const ttl = await redis.pttl(`${prefix}${userId}`)
    expect(ttl).toBeGreaterThan(fourHours - 60_000)
    expect(ttl).toBeLessThanOrEqual(fourHours)
    expect(await cache.get(userId)).toEqual(gifted)
  })

  it('treats an entry as expired at exactly 4 hours by the injected clock', async () => {
    await cache.set('u1', none)
    clock.advance(fourHours - 1)
    expect(await cache.get('u1')).toEqual(none)
    clock.advance(1)
    expect(await cache.get('u1')).toBeUndefined()
  })

  it('deletes the key on delete, and only its own keys on clear', async () => {
    const other = createRedisLicenseCache({ redis, clock, prefix: uniqueRedisPrefix() })
    await cache.set('u1', gifted)
    await cache.set('u2', gifted)
    await other.set('u1', gifted)
    await cache.delete('u1')
    expect(await redis.exists(`${prefix}u1`)).toBe(0)
    expect(await redis.exists(`${prefix}u2`)).toBe(1)
    await cache.clear()
    expect(await redis.exists(`${prefix}u2`)).toBe(0)
    expect(await other.get('u1')).toEqual(gifted)
    await other.clear()
  })

  it('is shared: an entry one instance deletes is gone for every instance', async () => {
    const second = createRedisLicenseCache({ redis, clock, prefix })
    await cache.set('u1', gifted)
    expect(await second.get('u1')).toEqual(gifted)
    await second.delete('u1')
    expect(await cache.get('u1')).toBeUndefined()
  })
})

/** Every call must come back well within this, however Redis fails (generous: it is a bound on hanging). */
const noHang = 2_000

async function timed<T>(work: Promise<T>): Promise<T> {
  const started = performance.now()
  const result = await work
  expect(performance.now() - started).toBeLessThan(noHang)
  return result
}

describe('redis license cache with Redis unreachable', () => {
  let redis: Redis
  let cache: LicenseCache

  beforeAll(async () => {
    redis = await connectRedis(await deadRedisUrl())
  })

  afterAll(async () => {
    await closeRedis(redis)
  })

  beforeEach(() => {
    cache = createRedisLicenseCache({ redis, clock: createTestClock(), prefix: uniqueRedisPrefix() })
  })

  it('answers every call at once, as a cache that holds nothing', async () => {
    await timed(cache.set('u1', gifted))
    expect(await timed(cache.get('u1'))).toBeUndefined()
    await timed(cache.delete('u1'))
    await timed(cache.clear())
    for (let i = 0; i < 20; i++) {
      expect(await timed(cache.get(`u${i}`))).toBeUndefined()
    }
  })
})

describe.skipIf(!redisRequirement.available)('redis license cache when Redis fails and comes back', () => {
  let server: OwnRedis
  let redis: Redis
  let look: Redis
  let clock: TestClock
  let prefix: string

  beforeAll(async () => {
    server = await startOwnRedis()
    redis = await connectRedis(server.url)
    look = connectTestRedis(server.url)
    look.on('error', () => {})
  })

  afterAll(async () => {
    look?.disconnect()
    if (redis) {
      await closeRedis(redis)
    }
    await server?.kill()
  })

  beforeEach(() => {
    clock = createTestClock()
    prefix = uniqueRedisPrefix()
  })

  /** As a replica of a primary it cannot reach, Redis keeps its data and answers reads, but refuses writes. */
  async function refuseWrites(refuse: boolean) {
    if (refuse) {
      await look.call('REPLICAOF', '127.0.0.1', String(await freePort()))
    } else {
      await look.call('REPLICAOF', 'NO', 'ONE')
    }
  }

  afterEach(async () => {
    // A test may leave writes refused or the server stopped.
    if ((await look.ping().catch(() => undefined)) === undefined) {
      await server.start()
    }
    await refuseWrites(false)
  })

  it('falls back to the database while Redis is down, and uses Redis again once it is back', async () => {
    const cache = createRedisLicenseCache({ redis, clock, prefix })
    await cache.set('u1', gifted)
    expect(await cache.get('u1')).toEqual(gifted)

    await server.kill()
    expect(await timed(cache.get('u1'))).toBeUndefined()
    await timed(cache.set('u2', gifted))
    await timed(cache.delete('u1'))

    await server.start()
    // Reconnection happens in the background; the first set after it is stored again.
    await expect
      .poll(
        async () => {
          await cache.set('u3', none)
          return look.exists(`${prefix}u3`)
        },
        { timeout: 10_000, interval: 100 },
      )
      .toBe(1)
    expect(await cache.get('u3')).toEqual(none)
  })

  it('skips a user whose delete failed, and deletes the key as soon as Redis takes writes again', async () => {
    const cache = createRedisLicenseCache({ redis, clock, prefix, pauseAfterFailure: 0 })
    const otherInstance = createRedisLicenseCache({ redis: look, clock, prefix })
    await cache.set('u1', gifted)
    await cache.set('u2', gifted)

    // Reads still work, writes fail: the delete is refused and the old answer stays in Redis.
    await refuseWrites(true)
    await timed(cache.delete('u1'))
    expect(await look.exists(`${prefix}u1`)).toBe(1)
    // Other users' entries are still used; this one is not, whatever Redis says.
    expect(await cache.get('u2')).toEqual(gifted)
    expect(await timed(cache.get('u1'))).toBeUndefined()
    expect(await otherInstance.get('u1')).toEqual(gifted)

    await refuseWrites(false)
    // After a failure the cache leaves Redis alone for a moment, then reads it again.
    await expect.poll(() => cache.get('u2'), { timeout: 10_000, interval: 100 }).toEqual(gifted)
    expect(await look.exists(`${prefix}u1`)).toBe(0)
    expect(await otherInstance.get('u1')).toBeUndefined()
    // Deleted for good: the user's answers are cached again.
    await cache.set('u1', none)
    expect(await cache.get('u1')).toEqual(none)
  })

  it('deletes again after a reconnection what it could not delete while Redis was down', async () => {
    const cache = createRedisLicenseCache({ redis, clock, prefix })
    await server.kill()
    await timed(cache.delete('u1'))
    await server.start()
    // A new server is empty, so write the old answer back as a surviving Redis would still hold it.
    await look.set(`${prefix}u1`, JSON.stringify({ ...gifted, expiresAt: clock.now().getTime() + fourHours }))
    // Nothing calls the cache: the reconnection alone makes it delete the key.
    await expect.poll(() => look.exists(`${prefix}u1`), { timeout: 10_000, interval: 100 }).toBe(0)
  })

  it('distrusts every entry after too many failed deletes, and clears them all once it can', async () => {
    // No pause after a failure: every read below really goes to Redis.
    const cache = createRedisLicenseCache({ redis, clock, prefix, maxUnsure: 2, pauseAfterFailure: 0 })
    await cache.set('u9', gifted)
    await cache.set('u8', gifted)
    await refuseWrites(true)
    for (const userId of ['u1', 'u2', 'u3']) {
      await timed(cache.delete(userId))
    }
    expect(await look.exists(`${prefix}u9`)).toBe(1)
    // Reads work, yet no entry is used, not even one of a user never deleted.
    expect(await cache.get('u9')).toBeUndefined()
    expect(await cache.get('u8')).toBeUndefined()
    await refuseWrites(false)
    // The next use of the cache once Redis answers again removes them.
    await expect
      .poll(
        async () => {
          await cache.get('u9')
          return look.exists(`${prefix}u9`)
        },
        { timeout: 10_000, interval: 100 },
      )
      .toBe(0)
  })

  it('stops distrusting once the longest-lived stale entry would have expired', async () => {
    const cache = createRedisLicenseCache({ redis, clock, prefix })
    await cache.set('u1', gifted)
    await refuseWrites(true)
    await timed(cache.delete('u1'))
    await refuseWrites(false)
    // By then Redis would have dropped the entry on its own; here it is written again to see it read.
    clock.advance(fourHours)
    await expect
      .poll(
        async () => {
          await cache.set('u1', none)
          return cache.get('u1')
        },
        { timeout: 10_000, interval: 100 },
      )
      .toEqual(none)
  })
})
