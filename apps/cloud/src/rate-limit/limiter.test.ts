import { randomUUID } from 'node:crypto'
import { rateLimitPolicies } from '@relay/contracts'
import type { RateLimiter, RateLimitPolicy } from '@relay/server-kit'
import { createTestClock } from '@relay/testkit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { closeRedis, connectRedis, type Redis } from '../redis.js'
import { rateLimitHeaders } from './headers.js'
import { createRateLimiter } from './limiter.js'

const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
/** One token every 200 ms. */
const policy = { capacity: 5, refillEvery: 1_000 } satisfies RateLimitPolicy

// Two connections, as two cloud instances sharing one Redis would hold.
let redis: Redis
let otherRedis: Redis
const usedPrefixes: string[] = []

beforeAll(async () => {
  redis = await connectRedis(redisUrl)
  otherRedis = await connectRedis(redisUrl)
})

afterEach(async () => {
  for (const prefix of usedPrefixes.splice(0)) {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) {
      await redis.unlink(...keys)
    }
  }
})

afterAll(async () => {
  await Promise.all([closeRedis(redis), closeRedis(otherRedis)])
})

function uniquePrefix() {
  const prefix = `test:rate-limit:${randomUUID()}:`
  usedPrefixes.push(prefix)
  return prefix
}

type StoreKind = 'memory' | 'redis'

function given(store: StoreKind) {
  const clock = createTestClock()
  const prefix = uniquePrefix()
  const limiter = createRateLimiter({ clock, prefix, redis: store === 'redis' ? redis : undefined })
  return { clock, prefix, limiter }
}

async function drain(limiter: RateLimiter, key: string, { capacity, refillEvery }: RateLimitPolicy) {
  for (let i = 0; i < capacity; i++) {
    const result = await limiter.consume(key, { capacity, refillEvery })
    expect(result).toMatchObject({ allowed: true, retryAfterMs: 0, remaining: capacity - 1 - i })
  }
}

describe.each(['memory', 'redis'] as const)('%s store', (store) => {
  it('allows a full bucket its capacity, then refuses', async () => {
    const { limiter } = given(store)
    const remaining: number[] = []
    for (let i = 0; i < policy.capacity; i++) {
      const result = await limiter.consume('user-1', policy)
      expect(result.allowed).toBe(true)
      remaining.push(result.remaining)
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0])
    expect(await limiter.consume('user-1', policy)).toMatchObject({ allowed: false, limit: 5, remaining: 0 })
  })

  it('tells how long until the refused cost is available', async () => {
    const { clock, limiter } = given(store)
    await drain(limiter, 'user-1', policy)
    expect((await limiter.consume('user-1', policy)).retryAfterMs).toBe(200)
    clock.advance(150)
    expect((await limiter.consume('user-1', policy)).retryAfterMs).toBe(50)
  })

  it('refills continuously: one more token every refillEvery / capacity', async () => {
    const { clock, limiter } = given(store)
    await drain(limiter, 'user-1', policy)
    clock.advance(199)
    expect(await limiter.consume('user-1', policy)).toMatchObject({ allowed: false, retryAfterMs: 1 })
    clock.advance(1)
    expect(await limiter.consume('user-1', policy)).toMatchObject({ allowed: true, remaining: 0 })
    expect(await limiter.consume('user-1', policy)).toMatchObject({ allowed: false, retryAfterMs: 200 })
    clock.advance(500)
    expect((await limiter.consume('user-1', policy)).allowed).toBe(true)
    expect((await limiter.consume('user-1', policy)).allowed).toBe(true)
    expect(await limiter.consume('user-1', policy)).toMatchObject({ allowed: false, retryAfterMs: 100 })
  })

  it('loses nothing to rounding when a token takes a fraction of a millisecond more', async () => {
    const thirds = { capacity: 3, refillEvery: 1_000 }
    const { clock, limiter } = given(store)
    await drain(limiter, 'user-1', thirds)
    const allowedAt: number[] = []
    for (let elapsed = 1; elapsed <= 1_000; elapsed++) {
      clock.advance(1)
      if ((await limiter.consume('user-1', thirds)).allowed) {
        allowedAt.push(elapsed)
      }
    }
    expect(allowedAt).toEqual([334, 667, 1_000])
  })

  it('has no burst at the edge of a window', async () => {
    const { clock, limiter } = given(store)
    clock.advance(policy.refillEvery - 1)
    await drain(limiter, 'user-1', policy)
    clock.advance(2)
    expect(await limiter.consume('user-1', policy)).toMatchObject({ allowed: false, retryAfterMs: 198 })
  })

  it('holds no more than capacity after a long idle time', async () => {
    const { clock, limiter } = given(store)
    await limiter.consume('user-1', policy)
    clock.advance(24 * 60 * 60 * 1000)
    await drain(limiter, 'user-1', policy)
    expect((await limiter.consume('user-1', policy)).allowed).toBe(false)
  })

  it('takes a cost of several tokens at once, or none of them', async () => {
    const { limiter } = given(store)
    const backup = rateLimitPolicies.backup
    expect(await limiter.consume('user-1', backup, 3)).toMatchObject({ allowed: true, remaining: 7 })
    expect(await limiter.consume('user-1', backup, 3)).toMatchObject({ allowed: true, remaining: 4 })
    expect(await limiter.consume('user-1', backup, 3)).toMatchObject({ allowed: true, remaining: 1 })
    expect(await limiter.consume('user-1', backup, 3)).toEqual({
      allowed: false,
      limit: 10,
      remaining: 1,
      retryAfterMs: 12_000,
      resetMs: 54_000,
    })
    expect(await limiter.consume('user-1', backup)).toMatchObject({ allowed: true, remaining: 0 })
  })

  it('reports when the bucket is full again', async () => {
    const { clock, limiter } = given(store)
    expect((await limiter.consume('user-1', policy)).resetMs).toBe(200)
    await limiter.consume('user-1', policy, 4)
    clock.advance(300)
    expect(await limiter.consume('user-1', policy, 2)).toMatchObject({ allowed: false, remaining: 1, resetMs: 700 })
  })

  it('gives refunded tokens back', async () => {
    const { limiter } = given(store)
    await drain(limiter, 'user-1', policy)
    await limiter.refund('user-1', policy, 2)
    expect((await limiter.consume('user-1', policy)).allowed).toBe(true)
    expect((await limiter.consume('user-1', policy)).allowed).toBe(true)
    expect((await limiter.consume('user-1', policy)).allowed).toBe(false)
  })

  it('never refunds beyond capacity', async () => {
    const { limiter } = given(store)
    await limiter.refund('user-1', policy)
    expect((await limiter.consume('user-1', policy)).remaining).toBe(4)
    await limiter.refund('user-1', policy, 5)
    expect((await limiter.consume('user-1', policy)).remaining).toBe(4)
  })

  it('keeps separate keys independent', async () => {
    const { limiter } = given(store)
    await drain(limiter, 'user-1', policy)
    expect(await limiter.consume('user-2', policy)).toMatchObject({ allowed: true, remaining: 4 })
    expect((await limiter.consume('user-1', policy)).allowed).toBe(false)
  })

  it('applies the dashboard policy: 200 per 10 s', async () => {
    const { clock, limiter } = given(store)
    await drain(limiter, 'dashboard:user-1', rateLimitPolicies.dashboard)
    expect(await limiter.consume('dashboard:user-1', rateLimitPolicies.dashboard)).toEqual({
      allowed: false,
      limit: 200,
      remaining: 0,
      retryAfterMs: 50,
      resetMs: 10_000,
    })
    clock.advance(50)
    expect((await limiter.consume('dashboard:user-1', rateLimitPolicies.dashboard)).allowed).toBe(true)
  })

  it('applies the backup policy: 10 per 60 s', async () => {
    const { clock, limiter } = given(store)
    await drain(limiter, 'backup:user-1', rateLimitPolicies.backup)
    expect(await limiter.consume('backup:user-1', rateLimitPolicies.backup)).toEqual({
      allowed: false,
      limit: 10,
      remaining: 0,
      retryAfterMs: 6_000,
      resetMs: 60_000,
    })
    clock.advance(6_000)
    expect((await limiter.consume('backup:user-1', rateLimitPolicies.backup)).allowed).toBe(true)
  })

  it('adds no tokens when the clock goes back', async () => {
    const { clock, limiter } = given(store)
    await drain(limiter, 'user-1', policy)
    clock.advance(-60_000)
    expect(await limiter.consume('user-1', policy)).toMatchObject({ allowed: false, retryAfterMs: 60_200 })
    clock.advance(60_199)
    expect((await limiter.consume('user-1', policy)).allowed).toBe(false)
    clock.advance(1)
    expect((await limiter.consume('user-1', policy)).allowed).toBe(true)
  })

  it('rejects costs and policies it could never meet', async () => {
    const { limiter } = given(store)
    await expect(limiter.consume('user-1', policy, 6)).rejects.toThrow(RangeError)
    await expect(limiter.consume('user-1', policy, 0)).rejects.toThrow(RangeError)
    await expect(limiter.consume('user-1', policy, 1.5)).rejects.toThrow(RangeError)
    await expect(limiter.refund('user-1', policy, 0)).rejects.toThrow(RangeError)
    await expect(limiter.consume('user-1', { capacity: 0, refillEvery: 1_000 })).rejects.toThrow(RangeError)
    await expect(limiter.consume('user-1', { capacity: 5, refillEvery: 0.5 })).rejects.toThrow(RangeError)
  })
})

describe('redis store', () => {
  it('lets exactly capacity through 50 parallel requests from two instances', async () => {
    const clock = createTestClock()
    const prefix = uniquePrefix()
    const instances = [redis, otherRedis].map((client) => createRateLimiter({ clock, prefix, redis: client }))
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => instances[i % 2]?.consume('user-1', { capacity: 10, refillEvery: 60_000 })),
    )
    expect(results.filter((result) => result?.allowed)).toHaveLength(10)
    expect(results.filter((result) => result?.allowed === false)).toHaveLength(40)
  })

  it('expires a key when its bucket would be full again, and deletes it once full', async () => {
    const { prefix, limiter } = given('redis')
    const backup = rateLimitPolicies.backup
    await limiter.consume('user-1', backup)
    // resetMs plus the margin for Redis's own clock, less the real time this test has taken.
    expect(await redis.pttl(`${prefix}user-1`)).toBeGreaterThan(6_500)
    expect(await redis.pttl(`${prefix}user-1`)).toBeLessThanOrEqual(7_000)
    await limiter.consume('user-1', backup, 9)
    expect(await redis.pttl(`${prefix}user-1`)).toBeGreaterThan(60_500)
    await limiter.refund('user-1', backup, 10)
    expect(await redis.exists(`${prefix}user-1`)).toBe(0)
    expect(limiter.bucketsInMemory()).toBe(0)
  })

  it('loads its script again after Redis forgets it', async () => {
    const { limiter } = given('redis')
    await limiter.consume('user-1', policy)
    await redis.script('FLUSH')
    expect(await limiter.consume('user-1', policy)).toMatchObject({ allowed: true, remaining: 3 })
  })
})

describe('memory store', () => {
  it('drops buckets once they would be full again', async () => {
    const { clock, limiter } = given('memory')
    await limiter.consume('user-1', policy)
    clock.advance(30_000)
    await limiter.consume('user-2', rateLimitPolicies.backup, 10)
    expect(limiter.bucketsInMemory()).toBe(2)
    clock.advance(30_000)
    await limiter.consume('user-3', policy)
    // user-1 was full 200 ms after its request; user-2 is full at 90 s.
    expect(limiter.bucketsInMemory()).toBe(2)
    clock.advance(60_000)
    await limiter.consume('user-3', policy)
    expect(limiter.bucketsInMemory()).toBe(1)
  })

  it('drops a bucket at once when a refund fills it', async () => {
    const { limiter } = given('memory')
    await limiter.consume('user-1', policy)
    expect(limiter.bucketsInMemory()).toBe(1)
    await limiter.refund('user-1', policy)
    expect(limiter.bucketsInMemory()).toBe(0)
  })
})

describe('rateLimitHeaders', () => {
  it('describes the bucket on an allowed request, without Retry-After', () => {
    const headers = rateLimitHeaders({ allowed: true, limit: 200, remaining: 150, retryAfterMs: 0, resetMs: 2_001 })
    expect(headers).toEqual({ 'RateLimit-Limit': '200', 'RateLimit-Remaining': '150', 'RateLimit-Reset': '3' })
  })

  it('adds Retry-After in whole seconds, rounded up, on a refusal', () => {
    const headers = rateLimitHeaders({ allowed: false, limit: 10, remaining: 0, retryAfterMs: 6_001, resetMs: 60_000 })
    expect(headers).toEqual({
      'RateLimit-Limit': '10',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '60',
      'Retry-After': '7',
    })
  })

  it('never asks to retry after less than one second', () => {
    const soon = rateLimitHeaders({ allowed: false, limit: 200, remaining: 0, retryAfterMs: 50, resetMs: 10_000 })
    expect(soon['Retry-After']).toBe('1')
    const now = rateLimitHeaders({ allowed: false, limit: 200, remaining: 0, retryAfterMs: 0, resetMs: 0 })
    expect(now['Retry-After']).toBe('1')
    expect(now['RateLimit-Reset']).toBe('0')
  })
})
