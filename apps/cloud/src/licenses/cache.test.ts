import { randomUUID } from 'node:crypto'
import { authTimings } from '@relay/contracts'
import { createTestClock, type TestClock } from '@relay/testkit'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { connectTestRedis, redisRequirement, uniqueRedisPrefix } from '../../test/redis.js'
import type { Redis } from '../redis.js'
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
