import { randomUUID } from 'node:crypto'
import { systemClock } from '@relay/server-kit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { testConfig } from '../../test/app.js'
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/database.js'
import { connectTestRedis, redisRequirement, testRedisUrl } from '../../test/redis.js'
import { createTestUser } from '../../test/users.js'
import { createMemoryLicenseCache, createRedisLicenseCache } from '../licenses/cache.js'
import { createLicenseService, type LicenseService } from '../licenses/service.js'
import { runCli } from './run.js'

const gifted = { valid: true, source: 'gifted' } as const
const subscribed = { valid: true, source: 'subscription' } as const
const none = { valid: false, source: null } as const

describe.each(databaseKinds)('account commands on %s', (kind) => {
  let database: TestDatabase
  const services: LicenseService[] = []

  async function cli(argv: string[], env: Record<string, string> = {}) {
    const lines: string[] = []
    const code = await runCli(argv, {
      config: testConfig(database.dataDir, env),
      out: (line) => lines.push(line),
      database,
    })
    return { code, output: lines.join('\n') }
  }

  /** The running app's license service, in another process as far as the CLI is concerned. */
  async function server() {
    const service = createLicenseService({
      db: database.db,
      clock: systemClock,
      cache: createMemoryLicenseCache({ clock: systemClock }),
      listen: database.listen,
    })
    services.push(service)
    await service.ready()
    return service
  }

  beforeAll(async () => {
    database = await createTestDatabase(kind)
  })

  afterEach(async () => {
    await Promise.all(services.splice(0).map((service) => service.close()))
  })

  afterAll(async () => {
    await database?.dispose()
  })

  it('adds a user and prints its id', async () => {
    const email = `${randomUUID()}@example.com`
    const { code, output } = await cli(['users', 'add', '--email', email, '--password', 'long enough', '--name', 'Ada'])
    expect(code).toBe(0)
    const row = await database.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow()
    expect(output).toBe(row.id)
    expect(row.name).toBe('Ada')
    expect(row.password_hash).toMatch(/^scrypt/)
  })

  it('refuses a user without a password and a duplicate email', async () => {
    expect((await cli(['users', 'add', '--email', 'x@example.com'])).code).toBe(2)
    const user = await createTestUser(database.db)
    const again = await cli(['users', 'add', '--email', user.email, '--password', 'long enough'])
    expect(again).toMatchObject({ code: 1, output: expect.stringContaining('already exists') })
  })

  it('lists users with their license', async () => {
    const plain = await createTestUser(database.db)
    const giftee = await createTestUser(database.db)
    expect((await cli(['users', 'gift', giftee.email])).code).toBe(0)
    const { code, output } = await cli(['users', 'list'])
    expect(code).toBe(0)
    const lines = output.split('\n')
    expect(lines[0]).toBe('id\temail\tname\tlicense')
    expect(lines).toContain([plain.id, plain.email, plain.name, 'none'].join('\t'))
    expect(lines).toContain([giftee.id, giftee.email, giftee.name, 'gifted'].join('\t'))
  })

  it('gifts and ungifts by email or id, invalidating the server cache at once', async () => {
    const user = await createTestUser(database.db)
    const running = await server()
    expect(await running.check(user.id)).toEqual(none)

    expect(await cli(['users', 'gift', user.email])).toEqual({ code: 0, output: `${user.email}: license gifted` })
    await expect.poll(() => running.check(user.id), { timeout: 5000, interval: 20 }).toEqual(gifted)

    expect((await cli(['users', 'ungift', user.id])).code).toBe(0)
    await expect.poll(() => running.check(user.id), { timeout: 5000, interval: 20 }).toEqual(none)
  })

  it('reports an unknown user and a missing argument', async () => {
    expect(await cli(['users', 'gift', 'nobody@example.com'])).toEqual({
      code: 1,
      output: 'error: no user nobody@example.com',
    })
    expect((await cli(['users', 'gift'])).code).toBe(2)
    expect((await cli(['users', 'gift', 'a@example.com', 'b@example.com'])).code).toBe(2)
  })

  it('sets a subscription status, invalidating the server cache at once', async () => {
    const user = await createTestUser(database.db)
    const running = await server()
    expect(await running.check(user.id)).toEqual(none)

    const set = await cli([
      'subscriptions',
      'set',
      user.email,
      '--status',
      'active',
      '--period-end',
      '2026-03-01T00:00:00Z',
    ])
    expect(set).toEqual({ code: 0, output: `${user.email}: stripe subscription manual-${user.id} is active` })
    await expect.poll(() => running.check(user.id), { timeout: 5000, interval: 20 }).toEqual(subscribed)

    expect((await cli(['subscriptions', 'set', user.id, '--status', 'past_due'])).code).toBe(0)
    await expect.poll(() => running.check(user.id), { timeout: 5000, interval: 20 }).toEqual(none)

    const rows = await database.db.selectFrom('subscriptions').selectAll().where('user_id', '=', user.id).execute()
    expect(rows).toMatchObject([
      {
        provider: 'stripe',
        customer_id: `manual-${user.id}`,
        subscription_id: `manual-${user.id}`,
        status: 'past_due',
      },
    ])
  })

  it('stores the given provider, customer and subscription ids', async () => {
    const user = await createTestUser(database.db)
    const argv = ['subscriptions', 'set', user.email, '--status', 'active', '--provider', 'paddle']
    expect((await cli([...argv, '--customer', 'ctm_1', '--subscription', 'sub_x'])).code).toBe(0)
    const row = await database.db
      .selectFrom('subscriptions')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow()
    expect(row).toMatchObject({ provider: 'paddle', customer_id: 'ctm_1', subscription_id: 'sub_x', status: 'active' })
    expect(row.current_period_end).toBeNull()
  })

  it('refuses an unknown status or a bad period end', async () => {
    const user = await createTestUser(database.db)
    const bogus = await cli(['subscriptions', 'set', user.email, '--status', 'actve'])
    expect(bogus).toMatchObject({ code: 2, output: expect.stringContaining('--status must be one of active') })
    expect((await cli(['subscriptions', 'set', user.email, '--status', 'active', '--period-end', 'soon'])).code).toBe(2)
    expect(await database.db.selectFrom('subscriptions').where('user_id', '=', user.id).select('id').execute()).toEqual(
      [],
    )
  })

  describe.skipIf(!redisRequirement.available)('with REDIS_URL', () => {
    it('deletes the shared cache entry', async () => {
      const redis = connectTestRedis()
      const cache = createRedisLicenseCache({ redis, clock: systemClock })
      const running = createLicenseService({ db: database.db, clock: systemClock, cache })
      try {
        const user = await createTestUser(database.db)
        expect(await running.check(user.id)).toEqual(none)
        expect((await cli(['users', 'gift', user.email], { REDIS_URL: testRedisUrl })).code).toBe(0)
        // No waiting: the command deleted the key every instance reads before it returned.
        expect(await running.check(user.id)).toEqual(gifted)
        await cache.delete(user.id)
      } finally {
        await running.close()
        await redis.quit()
      }
    })
  })
})
