import { createHttpServer, systemClock } from '@relay/server-kit'
import { freePort } from '@relay/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Caller, newCaller } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { deadRedisUrl, type OwnRedis, redisRequirement, startOwnRedis } from '../../test/redis.js'
import { closeRedis, connectRedis, type Redis } from '../redis.js'
import { limitPerUser } from './hook.js'
import { createRateLimiter, unavailableRetryAfterSeconds } from './limiter.js'

/** A bound on hanging, not a measure of speed: a request must come back well within it. */
const noHang = 2_000

async function timedCall(user: Caller, url: string): Promise<Response> {
  const started = performance.now()
  const response = await user.call('GET', url)
  expect(performance.now() - started).toBeLessThan(noHang)
  return response
}

async function expectRefusedForNow(response: Response) {
  expect(response.status).toBe(503)
  expect(response.headers.get('retry-after')).toBe(String(unavailableRetryAfterSeconds))
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  expect(Number(response.headers.get('retry-after'))).toBeLessThanOrEqual(5)
  expect(await response.json()).toMatchObject({ success: false, code: 'UNAVAILABLE' })
}

describe('rate limits without their store', () => {
  let cloud: TestCloud

  beforeAll(async () => {
    // Nothing listens there: every connection is refused.
    cloud = await startTestCloud('pglite', { env: { REDIS_URL: await deadRedisUrl(), LOG_LEVEL: 'fatal' } })
  })

  afterAll(async () => {
    await cloud?.close()
  })

  it('refuses at once with 503 and Retry-After instead of letting requests through unlimited', async () => {
    const user = await newCaller(cloud)
    for (let i = 0; i < 3; i++) {
      await expectRefusedForNow(await timedCall(user, '/cloud-backups/status'))
    }
  })

  it('still answers routes without a limit', async () => {
    const user = await newCaller(cloud)
    const response = await timedCall(user, '/auth/user-info')
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ userId: user.id, hasValidLicense: true })
  })
})

describe('a route that consumes tokens itself while the store is unreachable', () => {
  let redis: Redis
  const app = createHttpServer({ logger: { level: 'silent', pretty: false } })

  beforeAll(async () => {
    redis = await connectRedis(await deadRedisUrl())
    const limiter = createRateLimiter({ clock: systemClock, redis, prefix: 'test:' })
    limitPerUser(app, limiter)
    app.post('/sign-in', { config: { public: true } }, async () => {
      await limiter.consume('sign-in:someone', { capacity: 5, refillEvery: 60_000 })
      return { signedIn: true }
    })
    await app.listen({ port: await freePort(), host: '127.0.0.1' })
  })

  afterAll(async () => {
    await app.close()
    await closeRedis(redis)
  })

  it('answers 503 with the same Retry-After', async () => {
    const { port } = app.server.address() as { port: number }
    const response = await fetch(`http://127.0.0.1:${port}/sign-in`, { method: 'POST' })
    await expectRefusedForNow(response)
  })
})

describe.skipIf(!redisRequirement.available)('rate limits when Redis dies and comes back', () => {
  let server: OwnRedis
  let cloud: TestCloud

  beforeAll(async () => {
    server = await startOwnRedis()
    cloud = await startTestCloud('pglite', { env: { REDIS_URL: server.url, LOG_LEVEL: 'fatal' } })
  })

  afterAll(async () => {
    server?.thaw()
    await cloud?.close()
    await server?.kill()
  })

  it('refuses without hanging while Redis accepts connections but answers nothing', async () => {
    const user = await newCaller(cloud)
    expect((await timedCall(user, '/cloud-backups/status')).status).toBe(200)
    server.freeze()
    try {
      for (let i = 0; i < 5; i++) {
        await expectRefusedForNow(await timedCall(user, '/cloud-backups/status'))
      }
    } finally {
      server.thaw()
    }
    await expect
      .poll(async () => (await user.call('GET', '/cloud-backups/status')).status, { timeout: 10_000, interval: 100 })
      .toBe(200)
  })

  it('refuses while Redis is down and limits again once it is back', async () => {
    const user = await newCaller(cloud)
    const before = await timedCall(user, '/cloud-backups/status')
    expect(before.status).toBe(200)
    expect(before.headers.get('ratelimit-remaining')).toBe('199')

    await server.kill()
    await expectRefusedForNow(await timedCall(user, '/cloud-backups/status'))
    await expectRefusedForNow(await timedCall(user, '/cloud-backups/status'))

    // A new, empty Redis: the bucket starts full again once the connection is back.
    await server.start()
    await expect
      .poll(async () => (await user.call('GET', '/cloud-backups/status')).status, { timeout: 10_000, interval: 100 })
      .toBe(200)
    const after = await timedCall(user, '/cloud-backups/status')
    expect(after.status).toBe(200)
    expect(after.headers.get('ratelimit-remaining')).toBe('198')
  })
})
