import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import Stripe from 'stripe'
import { Type } from 'typebox'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { testConfig } from '../../test/app.js'
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/database.js'
import { createTestUser } from '../../test/users.js'
import { type CloudApp, createApp } from '../app.js'
import { createMemoryLicenseCache } from '../licenses/cache.js'
import { createLicenseService, type LicenseService } from '../licenses/service.js'
import { createCloudServices } from '../services.js'

const secret = 'whsec_test_secret'
const subscribed = { valid: true, source: 'subscription' } as const
const none = { valid: false, source: null } as const

type SubscriptionFields = { status: string; customer: string; metadata?: Record<string, string>; periodEnd?: number }

function subscriptionEvent(
  type: string,
  subscriptionId: string,
  fields: SubscriptionFields,
  eventId = randomEventId(),
) {
  return {
    id: eventId,
    object: 'event',
    type,
    data: {
      object: {
        id: subscriptionId,
        object: 'subscription',
        customer: fields.customer,
        status: fields.status,
        metadata: fields.metadata ?? {},
        items: { object: 'list', data: [{ id: 'si_1', current_period_end: fields.periodEnd ?? 1_800_000_000 }] },
      },
    },
  }
}

function randomEventId() {
  return `evt_${randomUUID().replaceAll('-', '')}`
}

function sign(payload: string, options: { secret?: string; timestamp?: number } = {}) {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? secret, ...options })
}

describe.each(databaseKinds)('stripe webhook on %s', (kind) => {
  let database: TestDatabase
  let app: CloudApp
  const followers: LicenseService[] = []

  /** Another instance's license cache: it drops an entry when it hears about a change. */
  async function follower() {
    const service = createLicenseService({
      db: database.db,
      clock: { now: () => new Date() },
      cache: createMemoryLicenseCache({ clock: { now: () => new Date() } }),
      listen: database.listen,
    })
    followers.push(service)
    await service.ready()
    return service
  }

  function post(body: string | object, headers: Record<string, string> = {}, target: CloudApp = app) {
    const payload = typeof body === 'string' ? body : JSON.stringify(body)
    return target.inject({
      method: 'POST',
      url: '/webhooks/stripe',
      payload,
      headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': sign(payload), ...headers },
    })
  }

  function subscriptionRows(userId: string) {
    return database.db.selectFrom('subscriptions').selectAll().where('user_id', '=', userId).execute()
  }

  function eventRow(eventId: string) {
    return database.db.selectFrom('payment_events').selectAll().where('event_id', '=', eventId).executeTakeFirst()
  }

  beforeAll(async () => {
    database = await createTestDatabase(kind)
    app = await createApp(testConfig(database.dataDir, { STRIPE_WEBHOOK_SECRET: secret }), { database })
    // A JSON route elsewhere in the app: the webhook's raw body parser must not reach it.
    app.post(
      '/probe',
      { schema: { body: Type.Object({ name: Type.String() }) }, config: { public: true } },
      async (request) => ({ got: request.body }),
    )
    await app.ready()
  })

  afterEach(async () => {
    await Promise.all(followers.splice(0).map((service) => service.close()))
  })

  afterAll(async () => {
    await app?.close()
    await database?.dispose()
  })

  it('mirrors a created subscription for the user named in its metadata', async () => {
    const user = await createTestUser(database.db)
    const event = subscriptionEvent('customer.subscription.created', 'sub_created', {
      status: 'active',
      customer: 'cus_created',
      metadata: { userId: user.id },
      periodEnd: 1_800_000_000,
    })
    const res = await post(event)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ received: true })
    expect(await subscriptionRows(user.id)).toMatchObject([
      {
        provider: 'stripe',
        customer_id: 'cus_created',
        subscription_id: 'sub_created',
        status: 'active',
        current_period_end: new Date(1_800_000_000 * 1000),
      },
    ])
    expect(await eventRow(event.id)).toMatchObject({ provider: 'stripe', type: 'customer.subscription.created' })
  })

  it('finds the user by customer id on update and delete, and drops cached licenses at once', async () => {
    const user = await createTestUser(database.db)
    const other = await follower()
    await post(
      subscriptionEvent('customer.subscription.created', 'sub_lifecycle', {
        status: 'active',
        customer: 'cus_lifecycle',
        metadata: { userId: user.id },
      }),
    )
    expect(await other.check(user.id)).toEqual(subscribed)

    const updated = await post(
      subscriptionEvent('customer.subscription.updated', 'sub_lifecycle', {
        status: 'past_due',
        customer: 'cus_lifecycle',
      }),
    )
    expect(updated.statusCode).toBe(200)
    expect((await subscriptionRows(user.id))[0]?.status).toBe('past_due')
    await expect.poll(() => other.check(user.id), { timeout: 5000, interval: 20 }).toEqual(none)

    await post(
      subscriptionEvent('customer.subscription.updated', 'sub_lifecycle', {
        status: 'active',
        customer: 'cus_lifecycle',
      }),
    )
    await expect.poll(() => other.check(user.id), { timeout: 5000, interval: 20 }).toEqual(subscribed)

    // A deleted subscription has ended, whatever status its payload still carries.
    const deleted = await post(
      subscriptionEvent('customer.subscription.deleted', 'sub_lifecycle', {
        status: 'active',
        customer: 'cus_lifecycle',
      }),
    )
    expect(deleted.statusCode).toBe(200)
    expect((await subscriptionRows(user.id))[0]?.status).toBe('canceled')
    await expect.poll(() => other.check(user.id), { timeout: 5000, interval: 20 }).toEqual(none)
  })

  it('invalidates its own service at once', async () => {
    const clock = { now: () => new Date() }
    const services = createCloudServices({
      config: testConfig(database.dataDir, { STRIPE_WEBHOOK_SECRET: secret }),
      database,
      clock,
    })
    try {
      const user = await createTestUser(database.db)
      expect(await services.licenses.check(user.id)).toEqual(none)
      const payload = JSON.stringify(
        subscriptionEvent('customer.subscription.created', `sub_${randomUUID()}`, {
          status: 'active',
          customer: `cus_${randomUUID()}`,
          metadata: { userId: user.id },
        }),
      )
      const outcome = await services.payments.receiveStripeWebhook(Buffer.from(payload), sign(payload))
      expect(outcome.result).toBe('applied')
      expect(await services.licenses.check(user.id)).toEqual(subscribed)
    } finally {
      await services.close()
    }
  })

  it('does not revive a canceled subscription with a late update', async () => {
    const user = await createTestUser(database.db)
    const fields = { customer: 'cus_late', metadata: { userId: user.id } }
    await post(subscriptionEvent('customer.subscription.created', 'sub_late', { ...fields, status: 'active' }))
    await post(subscriptionEvent('customer.subscription.deleted', 'sub_late', { ...fields, status: 'canceled' }))
    const late = subscriptionEvent('customer.subscription.updated', 'sub_late', { ...fields, status: 'active' })
    expect((await post(late)).statusCode).toBe(200)
    expect((await subscriptionRows(user.id))[0]?.status).toBe('canceled')
    expect(await eventRow(late.id)).toBeDefined()
  })

  it('applies an event id once: a redelivery answers duplicate and changes nothing', async () => {
    const user = await createTestUser(database.db)
    const eventId = randomEventId()
    const fields = { customer: 'cus_dup', metadata: { userId: user.id } }
    const first = await post(
      subscriptionEvent('customer.subscription.created', 'sub_dup', { ...fields, status: 'active' }, eventId),
    )
    expect(first.json()).toEqual({ received: true })
    const again = await post(
      subscriptionEvent('customer.subscription.updated', 'sub_dup', { ...fields, status: 'canceled' }, eventId),
    )
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual({ received: true, duplicate: true })
    expect((await subscriptionRows(user.id))[0]?.status).toBe('active')
  })

  it('records an event for an unknown customer and changes nothing else', async () => {
    const before = await database.db.selectFrom('subscriptions').select('id').execute()
    const event = subscriptionEvent('customer.subscription.created', 'sub_stranger', {
      status: 'active',
      customer: 'cus_stranger',
      metadata: { userId: randomUUID() },
    })
    const res = await post(event)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ received: true })
    expect(await eventRow(event.id)).toBeDefined()
    expect(await database.db.selectFrom('subscriptions').select('id').execute()).toEqual(before)
  })

  it('records and ignores other event types', async () => {
    const event = { id: randomEventId(), object: 'event', type: 'invoice.paid', data: { object: { id: 'in_1' } } }
    const res = await post(event)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ received: true })
    expect(await eventRow(event.id)).toMatchObject({ type: 'invoice.paid' })
  })

  describe('refuses unverified bodies with 400 and changes nothing', () => {
    async function expectRefused(res: Awaited<ReturnType<typeof post>>, error: string, eventId: string) {
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({ success: false, error, code: 'INVALID_REQUEST' })
      expect(await eventRow(eventId)).toBeUndefined()
    }

    async function createdFor() {
      const user = await createTestUser(database.db)
      const event = subscriptionEvent('customer.subscription.created', `sub_${randomUUID()}`, {
        status: 'active',
        customer: `cus_${randomUUID()}`,
        metadata: { userId: user.id },
      })
      return { user, event, payload: JSON.stringify(event) }
    }

    it('signed with another secret', async () => {
      const { user, event, payload } = await createdFor()
      const res = await post(payload, { 'stripe-signature': sign(payload, { secret: 'whsec_other' }) })
      await expectRefused(res, 'Invalid Stripe signature', event.id)
      expect(await subscriptionRows(user.id)).toEqual([])
    })

    it('with a body other than the one signed', async () => {
      const { user, event, payload } = await createdFor()
      const res = await post(payload.replace('"active"', '"active" '), { 'stripe-signature': sign(payload) })
      await expectRefused(res, 'Invalid Stripe signature', event.id)
      expect(await subscriptionRows(user.id)).toEqual([])
    })

    it('signed too long ago (a replay)', async () => {
      const { event, payload } = await createdFor()
      const tenMinutesAgo = Math.floor(Date.now() / 1000) - 600
      const res = await post(payload, { 'stripe-signature': sign(payload, { timestamp: tenMinutesAgo }) })
      await expectRefused(res, 'Invalid Stripe signature', event.id)
    })

    it('signed with a date more than 5 minutes ahead (replayable until then)', async () => {
      const { user, event, payload } = await createdFor()
      const tenMinutesAhead = Math.floor(Date.now() / 1000) + 600
      const res = await post(payload, { 'stripe-signature': sign(payload, { timestamp: tenMinutesAhead }) })
      await expectRefused(res, 'Invalid Stripe signature', event.id)
      expect(await subscriptionRows(user.id)).toEqual([])
    })

    it('without a signature header', async () => {
      const { event, payload } = await createdFor()
      const res = await app.inject({
        method: 'POST',
        url: '/webhooks/stripe',
        payload,
        headers: { 'content-type': 'application/json' },
      })
      await expectRefused(res, 'Missing Stripe-Signature header', event.id)
    })

    it('with malformed JSON under a valid signature', async () => {
      const payload = '{"id": "evt_broken", "type": '
      const res = await post(payload)
      await expectRefused(res, 'Malformed JSON in webhook body', 'evt_broken')
    })
  })

  it("accepts a signature dated slightly ahead: the sender's clock may run fast", async () => {
    const user = await createTestUser(database.db)
    const event = subscriptionEvent('customer.subscription.created', `sub_${randomUUID()}`, {
      status: 'active',
      customer: `cus_${randomUUID()}`,
      metadata: { userId: user.id },
    })
    const payload = JSON.stringify(event)
    const oneMinuteAhead = Math.floor(Date.now() / 1000) + 60
    const res = await post(payload, { 'stripe-signature': sign(payload, { timestamp: oneMinuteAhead }) })
    expect(res.statusCode).toBe(200)
    expect(await subscriptionRows(user.id)).toMatchObject([{ status: 'active' }])
  })

  it('keeps parsing JSON as usual on the rest of the app', async () => {
    const res = await app.inject({ method: 'POST', url: '/probe', payload: { name: 'x' } })
    expect(res.json()).toEqual({ got: { name: 'x' } })
  })

  it.runIf(kind === 'postgres')('stops listening for license changes when the app closes', async () => {
    const listeners = async () => {
      const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity
        where datname = current_database() and query ilike 'listen%'`.execute(database.db)
      return rows.length
    }
    const before = await listeners()
    const second = await createApp(testConfig(database.dataDir), { database })
    await expect.poll(listeners, { timeout: 5000, interval: 20 }).toBe(before + 1)
    await second.close()
    await expect.poll(listeners, { timeout: 5000, interval: 20 }).toBe(before)
  })

  it('answers 503 when no webhook secret is configured', async () => {
    const unconfigured = await createApp(testConfig(database.dataDir), { database })
    try {
      const event = subscriptionEvent('customer.subscription.created', 'sub_nosecret', {
        status: 'active',
        customer: 'cus_nosecret',
      })
      const res = await post(event, {}, unconfigured)
      expect(res.statusCode).toBe(503)
      expect(res.json()).toEqual({
        success: false,
        error: 'Stripe webhooks are not configured: STRIPE_WEBHOOK_SECRET is not set',
        code: 'UNAVAILABLE',
      })
      expect(await eventRow(event.id)).toBeUndefined()
    } finally {
      await unconfigured.close()
    }
  })
})
