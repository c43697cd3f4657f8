import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Caller, newCaller } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import {
  connectTestRedis,
  deadRedisUrl,
  type OwnRedis,
  type RedisLink,
  redisRequirement,
  startOwnRedis,
  startRedisLink,
  testRedisUrl,
} from '../../test/redis.js'
import type { Redis } from '../redis.js'

/** A bound on hanging, not a measure of speed: a request must come back well within it. */
const noHang = 2_000

async function userInfo(user: Caller) {
  const started = performance.now()
  const response = await user.call('GET', '/auth/user-info')
  expect(performance.now() - started).toBeLessThan(noHang)
  expect(response.status).toBe(200)
  const body = (await response.json()) as { hasValidLicense: boolean; licenseSource: string | null }
  return { valid: body.hasValidLicense, source: body.licenseSource }
}

const licenseKey = (userId: string) => `relay-cloud:license:${userId}`
const gifted = { valid: true, source: 'gifted' }
const none = { valid: false, source: null }

describe('licenses with REDIS_URL where nothing listens', () => {
  let cloud: TestCloud

  beforeAll(async () => {
    cloud = await startTestCloud('pglite', { env: { REDIS_URL: await deadRedisUrl(), LOG_LEVEL: 'fatal' } })
  })

  afterAll(async () => {
    await cloud?.close()
  })

  it('answers user-info from the database, and sees every change at once', async () => {
    const licensed = await newCaller(cloud)
    const unlicensed = await newCaller(cloud, { licensed: false })
    expect(await userInfo(licensed)).toEqual(gifted)
    expect(await userInfo(unlicensed)).toEqual(none)

    await cloud.app.services.licenses.setGifted(licensed.id, false)
    await cloud.app.services.licenses.setGifted(unlicensed.id, true)
    expect(await userInfo(licensed)).toEqual(none)
    expect(await userInfo(unlicensed)).toEqual(gifted)
  })
})

describe.skipIf(!redisRequirement.available)('licenses when Redis dies and comes back', () => {
  let server: OwnRedis
  let cloud: TestCloud
  let look: Redis

  beforeAll(async () => {
    server = await startOwnRedis()
    cloud = await startTestCloud('pglite', { env: { REDIS_URL: server.url, LOG_LEVEL: 'fatal' } })
    await cloud.app.services.licenses.ready()
    look = connectTestRedis(server.url)
    look.on('error', () => {})
  })

  afterAll(async () => {
    server?.thaw()
    look?.disconnect()
    await cloud?.close()
    await server?.kill()
  })

  it('reads the database while Redis is down, and caches in Redis again once it is back', async () => {
    const user = await newCaller(cloud)
    expect(await userInfo(user)).toEqual(gifted)
    expect(await look.exists(licenseKey(user.id))).toBe(1)

    await server.kill()
    expect(await userInfo(user)).toEqual(gifted)
    await cloud.app.services.licenses.setGifted(user.id, false)
    expect(await userInfo(user)).toEqual(none)

    await server.start()
    await expect
      .poll(
        async () => {
          expect(await userInfo(user)).toEqual(none)
          return JSON.parse((await look.get(licenseKey(user.id))) ?? 'null')
        },
        { timeout: 10_000, interval: 100 },
      )
      .toMatchObject(none)
  })

  it('answers from the database without hanging while Redis accepts connections but answers nothing', async () => {
    const user = await newCaller(cloud)
    expect(await userInfo(user)).toEqual(gifted)
    server.freeze()
    try {
      for (let i = 0; i < 5; i++) {
        expect(await userInfo(user)).toEqual(gifted)
      }
      await cloud.app.services.licenses.setGifted(user.id, false)
      expect(await userInfo(user)).toEqual(none)
    } finally {
      server.thaw()
    }
    // Once Redis answers again (and the pause after its failures is over), answers are cached there again.
    await expect
      .poll(
        async () => {
          expect(await userInfo(user)).toEqual(none)
          return look.exists(licenseKey(user.id))
        },
        { timeout: 10_000, interval: 100 },
      )
      .toBe(1)
  })
})

describe.skipIf(!redisRequirement.available)(
  'licenses when the connection to Redis is lost and Redis keeps its data',
  () => {
    let link: RedisLink
    let cloud: TestCloud
    let look: Redis

    beforeAll(async () => {
      link = await startRedisLink(testRedisUrl)
      cloud = await startTestCloud('pglite', { env: { REDIS_URL: link.url, LOG_LEVEL: 'fatal' } })
      await cloud.app.services.licenses.ready()
      look = connectTestRedis()
    })

    afterAll(async () => {
      await look?.quit()
      await cloud?.close()
      await link?.close()
    })

    it('never serves the answer a failed delete left behind, and deletes it once connected again', async () => {
      const user = await newCaller(cloud)
      expect(await userInfo(user)).toEqual(gifted)
      expect(await look.exists(licenseKey(user.id))).toBe(1)

      await link.cut()
      await cloud.app.services.licenses.setGifted(user.id, false)
      expect(await look.exists(licenseKey(user.id))).toBe(1)
      expect(await userInfo(user)).toEqual(none)

      await link.restore()
      // Nothing asks for this user: the reconnection alone deletes the key every instance would read.
      await expect.poll(() => look.exists(licenseKey(user.id)), { timeout: 10_000, interval: 100 }).toBe(0)
      expect(await userInfo(user)).toEqual(none)
      await look.del(licenseKey(user.id))
    })
  },
)
