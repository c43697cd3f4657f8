import { randomUUID } from 'node:crypto'
import { authTimings } from '@relay/contracts'
import { createTestClock, type TestClock } from '@relay/testkit'
import { sql } from 'kysely'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/database.js'
import {
  connectTestRedis,
  redisRequirement,
  startRedisLink,
  testRedisUrl,
  uniqueRedisPrefix,
} from '../../test/redis.js'
import { createTestUser } from '../../test/users.js'
import { closeRedis, connectRedis, type Redis } from '../redis.js'
import { createMemoryLicenseCache, createRedisLicenseCache } from './cache.js'
import { createLicenseService, type LicenseDeps, type LicenseService } from './service.js'

const gifted = { valid: true, source: 'gifted' } as const
const subscribed = { valid: true, source: 'subscription' } as const
const none = { valid: false, source: null } as const

describe.each(databaseKinds)('license service on %s', (kind) => {
  let database: TestDatabase
  let clock: TestClock
  let licenses: LicenseService
  const opened: LicenseService[] = []

  /** Another instance on the same database, with a cache of its own. */
  function instance(deps: Partial<LicenseDeps> = {}): LicenseService {
    const service = createLicenseService({
      db: database.db,
      clock,
      cache: createMemoryLicenseCache({ clock }),
      ...deps,
    })
    opened.push(service)
    return service
  }

  function subscribe(userId: string, status: string, subscriptionId = `sub_${randomUUID()}`) {
    return licenses.upsertSubscription({
      userId,
      provider: 'stripe',
      customerId: `cus_${userId}`,
      subscriptionId,
      status,
      currentPeriodEnd: null,
    })
  }

  /** Changes the database behind the service's back, so only a cache miss can see it. */
  async function giftDirectly(userId: string) {
    await sql`update users set metadata = metadata || '{"giftedLicense": true}'::jsonb where id = ${userId}`.execute(
      database.db,
    )
  }

  beforeAll(async () => {
    database = await createTestDatabase(kind)
  })

  beforeEach(() => {
    clock = createTestClock()
    licenses = instance()
  })

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((service) => service.close()))
  })

  afterAll(async () => {
    await database?.dispose()
  })

  it('grants a gifted license', async () => {
    const user = await createTestUser(database.db)
    await licenses.setGifted(user.id, true)
    expect(await licenses.check(user.id)).toEqual(gifted)
    const row = await database.db.selectFrom('users').select('metadata').where('id', '=', user.id).executeTakeFirst()
    expect(row?.metadata).toEqual({ giftedLicense: true })
  })

  it('counts only the JSON boolean true as a gift', async () => {
    const user = await createTestUser(database.db)
    await sql`update users set metadata = '{"giftedLicense": "true"}'::jsonb where id = ${user.id}`.execute(database.db)
    expect(await licenses.check(user.id)).toEqual(none)
  })

  it('grants a license for an active subscription', async () => {
    const user = await createTestUser(database.db)
    await subscribe(user.id, 'active')
    expect(await licenses.check(user.id)).toEqual(subscribed)
  })

  it.each(['past_due', 'canceled', 'trialing', 'incomplete', 'unpaid', 'paused'])(
    'grants no license for a %s subscription',
    async (status) => {
      const user = await createTestUser(database.db)
      await subscribe(user.id, status)
      expect(await licenses.check(user.id)).toEqual(none)
    },
  )

  it('grants a license when any one subscription is active', async () => {
    const user = await createTestUser(database.db)
    await subscribe(user.id, 'canceled')
    await subscribe(user.id, 'active')
    expect(await licenses.check(user.id)).toEqual(subscribed)
  })

  it('names the gift as the source when both apply', async () => {
    const user = await createTestUser(database.db)
    await subscribe(user.id, 'active')
    await licenses.setGifted(user.id, true)
    expect(await licenses.check(user.id)).toEqual(gifted)
  })

  it('grants nothing to unknown users or malformed ids', async () => {
    expect(await licenses.check(randomUUID())).toEqual(none)
    expect(await licenses.check('not-a-uuid')).toEqual(none)
    await expect(licenses.setGifted(randomUUID(), true)).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })

  it('answers from the cache for 4 hours and from the database at exactly 4 hours', async () => {
    const user = await createTestUser(database.db)
    expect(await licenses.check(user.id)).toEqual(none)
    await giftDirectly(user.id)
    expect(await licenses.check(user.id)).toEqual(none)
    clock.advance(authTimings.licenseCache - 1)
    expect(await licenses.check(user.id)).toEqual(none)
    clock.advance(1)
    expect(await licenses.check(user.id)).toEqual(gifted)
  })

  it('invalidates at once when a gift is given or taken back', async () => {
    const user = await createTestUser(database.db)
    expect(await licenses.check(user.id)).toEqual(none)
    await licenses.setGifted(user.id, true)
    expect(await licenses.check(user.id)).toEqual(gifted)
    await licenses.setGifted(user.id, false)
    expect(await licenses.check(user.id)).toEqual(none)
    const row = await database.db.selectFrom('users').select('metadata').where('id', '=', user.id).executeTakeFirst()
    expect(row?.metadata).toEqual({})
  })

  it('invalidates at once when a subscription changes, for its new and its previous owner', async () => {
    const first = await createTestUser(database.db)
    const second = await createTestUser(database.db)
    await subscribe(first.id, 'past_due', 'sub_moving')
    expect(await licenses.check(first.id)).toEqual(none)
    await subscribe(first.id, 'active', 'sub_moving')
    expect(await licenses.check(first.id)).toEqual(subscribed)
    expect(await licenses.check(second.id)).toEqual(none)
    await subscribe(second.id, 'active', 'sub_moving')
    expect(await licenses.check(first.id)).toEqual(none)
    expect(await licenses.check(second.id)).toEqual(subscribed)
  })

  it('does not cache an answer read before an invalidation', async () => {
    const user = await createTestUser(database.db)
    const racing = licenses.check(user.id)
    await licenses.invalidate(user.id)
    expect(await racing).toEqual(none)
    await giftDirectly(user.id)
    expect(await licenses.check(user.id)).toEqual(gifted)
  })

  it('drops an entry when another instance changes the user (NOTIFY)', async () => {
    const follower = instance({ listen: database.listen })
    await follower.ready()
    const user = await createTestUser(database.db)
    expect(await follower.check(user.id)).toEqual(none)
    await giftDirectly(user.id)
    expect(await follower.check(user.id)).toEqual(none) // cached

    await licenses.setGifted(user.id, true)
    await expect.poll(() => follower.check(user.id), { timeout: 5000, interval: 20 }).toEqual(gifted)

    await subscribe(user.id, 'active')
    await licenses.setGifted(user.id, false)
    await expect.poll(() => follower.check(user.id), { timeout: 5000, interval: 20 }).toEqual(subscribed)
  })

  it.runIf(kind === 'postgres')('bypasses the cache while its listener is down, then listens again', async () => {
    const listeners = async () => {
      const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity
        where datname = current_database() and state = 'idle' and query ilike 'listen%'`.execute(database.db)
      return rows.map((row) => row.pid)
    }
    const follower = instance({ listen: database.listen, relistenDelay: 50 })
    await follower.ready()
    const user = await createTestUser(database.db)
    expect(await follower.check(user.id)).toEqual(none)
    const [lost] = await listeners()
    await sql`select pg_terminate_backend(${lost})`.execute(database.db)

    // A change the follower cannot hear about: only a check that skips the cache sees it.
    await giftDirectly(user.id)
    await expect.poll(() => follower.check(user.id), { timeout: 5000, interval: 20 }).toEqual(gifted)

    await expect
      .poll(async () => (await listeners()).filter((pid) => pid !== lost), { timeout: 5000, interval: 20 })
      .toHaveLength(1)
    await follower.ready()
    expect(await follower.check(user.id)).toEqual(gifted)
    await sql`update users set metadata = metadata - 'giftedLicense' where id = ${user.id}`.execute(database.db)
    expect(await follower.check(user.id)).toEqual(gifted) // cached again
    await licenses.setGifted(user.id, false)
    await expect.poll(() => follower.check(user.id), { timeout: 5000, interval: 20 }).toEqual(none)
  })

  describe.skipIf(!redisRequirement.available)('with the Redis cache', () => {
    let redis: Redis
    let prefix: string

    function redisInstance() {
      return instance({ cache: createRedisLicenseCache({ redis, clock, prefix }) })
    }

    beforeAll(() => {
      redis = connectTestRedis()
    })

    beforeEach(() => {
      prefix = uniqueRedisPrefix()
      licenses = redisInstance()
    })

    afterEach(async () => {
      await createRedisLicenseCache({ redis, clock, prefix }).clear()
    })

    afterAll(async () => {
      await redis?.quit()
    })

    it('answers from Redis for 4 hours', async () => {
      const user = await createTestUser(database.db)
      expect(await licenses.check(user.id)).toEqual(none)
      expect(await redis.exists(`${prefix}${user.id}`)).toBe(1)
      await giftDirectly(user.id)
      clock.advance(authTimings.licenseCache - 1)
      expect(await licenses.check(user.id)).toEqual(none)
      clock.advance(1)
      expect(await licenses.check(user.id)).toEqual(gifted)
    })

    it('has every listening instance delete the key when the changing one cannot reach Redis', async () => {
      const link = await startRedisLink(testRedisUrl)
      const cutOff = await connectRedis(link.url)
      try {
        const changing = instance({ cache: createRedisLicenseCache({ redis: cutOff, clock, prefix }) })
        const reading = instance({ cache: createRedisLicenseCache({ redis, clock, prefix }), listen: database.listen })
        await reading.ready()
        const user = await createTestUser(database.db)
        expect(await reading.check(user.id)).toEqual(none)
        await link.cut()
        await changing.setGifted(user.id, true)
        await expect.poll(() => reading.check(user.id), { timeout: 5000, interval: 20 }).toEqual(gifted)
      } finally {
        await closeRedis(cutOff)
        await link.close()
      }
    })

    it('deletes the shared key on a change, so every instance sees it at once', async () => {
      const other = redisInstance()
      const user = await createTestUser(database.db)
      expect(await other.check(user.id)).toEqual(none)
      await licenses.setGifted(user.id, true)
      expect(await redis.exists(`${prefix}${user.id}`)).toBe(0)
      expect(await other.check(user.id)).toEqual(gifted)
    })
  })
})
