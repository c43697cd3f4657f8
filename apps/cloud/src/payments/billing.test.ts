import { randomUUID } from 'node:crypto'
import { userInfoRoute } from '@relay/contracts'
import { ConfigError } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testConfig } from '../../test/app.js'
import { type Caller, newCaller } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { createTestDatabase, databaseKinds } from '../../test/database.js'
import { type CheckoutSession, type StripeStandIn, startStripeStandIn } from '../../test/stripe-stand-in.js'
import { createTestUser } from '../../test/users.js'
import { loadConfig } from '../config.js'
import * as stripeCustomers from '../db/migrations/0009-stripe-customers.js'

const secretKey = 'sk_test_stand_in_key'
const priceId = 'price_pro_monthly'
const webhookSecret = 'whsec_billing_test'
const billingEnv = (standIn: StripeStandIn) => ({
  STRIPE_WEBHOOK_SECRET: webhookSecret,
  STRIPE_SECRET_KEY: secretKey,
  STRIPE_PRICE_ID: priceId,
  STRIPE_API_URL: standIn.url,
})

/** Unix seconds, as Stripe dates its events. */
const nowSeconds = () => Math.floor(Date.now() / 1000)

function event<T extends object>(
  type: string,
  object: T,
  created = nowSeconds(),
  id = `evt_${randomUUID().replaceAll('-', '')}`,
) {
  return { id, object: 'event', type, created, data: { object } }
}

describe.each(databaseKinds)('Stripe billing on %s', (kind) => {
  let stripe: StripeStandIn
  let cloud: TestCloud

  type Buyer = Caller & { email: string }

  beforeAll(async () => {
    stripe = await startStripeStandIn({ secretKey, priceId })
    cloud = await startTestCloud(kind, { env: billingEnv(stripe) })
  })

  afterAll(async () => {
    await cloud?.close()
    await stripe?.close()
  })

  const billing = () => cloud.app.services.payments.billing
  const urls = () => ({ success: `${cloud.url}/account?checkout=done`, cancel: `${cloud.url}/account` })

  async function newBuyer(): Promise<Buyer> {
    const caller = await newCaller(cloud, { licensed: false })
    const account = await cloud.app.services.directory.find(caller.id)
    return { ...caller, email: account?.email ?? '' }
  }

  /** What the relay would learn about the user's license right now. */
  async function license(buyer: Buyer) {
    const res = await buyer.call('GET', userInfoRoute.url)
    expect(res.status).toBe(200)
    const info = (await res.json()) as { hasValidLicense: boolean; licenseSource: string | null }
    return { valid: info.hasValidLicense, source: info.licenseSource }
  }

  /** The user goes through Checkout and pays; the session as Stripe then reports it. */
  async function buy(buyer: Buyer, options?: { status?: string; periodEnd?: number }): Promise<CheckoutSession> {
    const url = await billing().checkout(buyer, urls())
    return stripe.complete(url.split('/').at(-1) ?? '', options)
  }

  function post(body: object | string, { signature, base = cloud.url }: { signature?: string; base?: string } = {}) {
    const payload = typeof body === 'string' ? body : JSON.stringify(body)
    return fetch(`${base}/webhooks/stripe`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': signature ?? Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }),
      },
      body: payload,
    })
  }

  const requestsTo = (method: string, path: string) =>
    stripe.requests.filter((request) => request.method === method && request.path === path)
  const links = (userId: string) =>
    cloud.database.db.selectFrom('stripe_customers').selectAll().where('user_id', '=', userId).execute()
  const subscriptionRows = (userId: string) =>
    cloud.database.db.selectFrom('subscriptions').selectAll().where('user_id', '=', userId).execute()
  const recorded = async (eventId: string) =>
    (await cloud.database.db
      .selectFrom('payment_events')
      .select('event_id')
      .where('event_id', '=', eventId)
      .executeTakeFirst()) !== undefined

  describe('Checkout', () => {
    it('starts a subscription Checkout for the account, as a new customer', async () => {
      const buyer = await newBuyer()
      const url = await billing().checkout(buyer, urls())
      const [request] = requestsTo('POST', '/v1/checkout/sessions').slice(-1)
      expect(request).toMatchObject({
        authorization: `Bearer ${secretKey}`,
        contentType: 'application/x-www-form-urlencoded',
        params: {
          mode: 'subscription',
          'line_items[0][price]': priceId,
          'line_items[0][quantity]': '1',
          client_reference_id: buyer.id,
          'metadata[userId]': buyer.id,
          'subscription_data[metadata][userId]': buyer.id,
          customer_email: buyer.email,
          success_url: urls().success,
          cancel_url: urls().cancel,
        },
      })
      expect(request?.params.customer).toBeUndefined()
      // The SDK makes its create calls safe to retry.
      expect(request?.idempotencyKey).toMatch(/\S/)
      const session = [...stripe.sessions.values()].find((s) => s.client_reference_id === buyer.id)
      expect(url).toBe(session?.url)
    })

    it('grants Pro within the request that reports the completed Checkout', async () => {
      const buyer = await newBuyer()
      expect(await license(buyer)).toEqual({ valid: false, source: null })
      const session = await buy(buyer, { periodEnd: 1_900_000_000 })
      const completed = event('checkout.session.completed', session)

      const res = await post(completed)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ received: true })
      expect(await license(buyer)).toEqual({ valid: true, source: 'subscription' })
      // The event names the subscription by id: its status and period were read from Stripe.
      expect(requestsTo('GET', `/v1/subscriptions/${session.subscription}`)).toMatchObject([
        { authorization: `Bearer ${secretKey}`, params: {} },
      ])
      expect(await links(buyer.id)).toMatchObject([{ customer_id: session.customer }])
      expect(await subscriptionRows(buyer.id)).toMatchObject([
        {
          provider: 'stripe',
          customer_id: session.customer,
          subscription_id: session.subscription,
          status: 'active',
          current_period_end: new Date(1_900_000_000 * 1000),
          provider_state_at: new Date(completed.created * 1000),
        },
      ])
    })

    it('uses the subscription a Checkout event carries expanded, without asking Stripe', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      const subscription = stripe.subscriptions.get(session.subscription ?? '')
      const before = stripe.requests.length
      expect((await post(event('checkout.session.completed', { ...session, subscription }))).status).toBe(200)
      expect(await license(buyer)).toEqual({ valid: true, source: 'subscription' })
      expect(stripe.requests.length).toBe(before)
    })

    it('applies a replayed Checkout event once and asks Stripe once', async () => {
      const buyer = await newBuyer()
      const completed = event('checkout.session.completed', await buy(buyer))
      expect(await (await post(completed)).json()).toEqual({ received: true })
      const again = await post(completed)
      expect(again.status).toBe(200)
      expect(await again.json()).toEqual({ received: true, duplicate: true })
      expect(requestsTo('GET', `/v1/subscriptions/${completed.data.object.subscription}`)).toHaveLength(1)
      expect(await links(buyer.id)).toHaveLength(1)
      expect(await subscriptionRows(buyer.id)).toHaveLength(1)
    })

    it('refuses a second Checkout while the subscription runs', async () => {
      const buyer = await newBuyer()
      await post(event('checkout.session.completed', await buy(buyer)))
      const before = requestsTo('POST', '/v1/checkout/sessions').length
      await expect(billing().checkout(buyer, urls())).rejects.toMatchObject({
        code: 'CONFLICT',
        message: 'You already have a Pro subscription: manage it from the customer portal',
      })
      expect(requestsTo('POST', '/v1/checkout/sessions')).toHaveLength(before)
    })

    it('takes Pro away when the subscription is deleted, and checks out a returning customer as the same customer', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      await post(event('checkout.session.completed', session))
      const subscription = stripe.subscriptions.get(session.subscription ?? '')
      const deleted = await post(event('customer.subscription.deleted', { ...subscription, status: 'canceled' }))
      expect(deleted.status).toBe(200)
      expect(await license(buyer)).toEqual({ valid: false, source: null })

      await billing().checkout(buyer, urls())
      const [request] = requestsTo('POST', '/v1/checkout/sessions').slice(-1)
      expect(request?.params).toMatchObject({ customer: session.customer, client_reference_id: buyer.id })
      expect(request?.params.customer_email).toBeUndefined()
    })

    it('answers 503 without recording the event when Stripe cannot be reached, and applies its redelivery', async () => {
      const buyer = await newBuyer()
      const completed = event('checkout.session.completed', await buy(buyer))
      stripe.failing = true
      let res: Response
      try {
        res = await post(completed)
      } finally {
        stripe.failing = false
      }
      expect(res.status).toBe(503)
      expect(await res.json()).toEqual({
        success: false,
        error: `Could not read subscription ${completed.data.object.subscription} from Stripe: the event is refused so that Stripe sends it again`,
        code: 'UNAVAILABLE',
      })
      expect(await recorded(completed.id)).toBe(false)
      expect(await links(buyer.id)).toEqual([])
      // The operator finds Stripe's own answer in the log.
      expect(cloud.logs.join('\n')).toContain('An unknown error occurred')
      expect(cloud.logs.join('\n')).not.toContain(secretKey)

      expect((await post(completed)).status).toBe(200)
      expect(await license(buyer)).toEqual({ valid: true, source: 'subscription' })
    })

    it('links the customer but grants nothing for a subscription Stripe no longer has', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      stripe.subscriptions.delete(session.subscription ?? '')
      const completed = event('checkout.session.completed', session)
      expect((await post(completed)).status).toBe(200)
      expect(await recorded(completed.id)).toBe(true)
      expect(await links(buyer.id)).toMatchObject([{ customer_id: session.customer }])
      expect(await license(buyer)).toEqual({ valid: false, source: null })
    })

    it('records and ignores Checkouts for no known account and Checkouts of another mode', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      const before = stripe.requests.length
      for (const object of [
        { ...session, client_reference_id: randomUUID(), metadata: {} },
        { ...session, client_reference_id: 'not-an-id', metadata: {} },
        { ...session, client_reference_id: null, metadata: {} },
        { ...session, mode: 'payment' },
      ]) {
        const completed = event('checkout.session.completed', object)
        const res = await post(completed)
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ received: true })
        expect(await recorded(completed.id)).toBe(true)
      }
      expect(await links(buyer.id)).toEqual([])
      expect(stripe.requests.length).toBe(before)
    })

    it('refuses with 400 a Checkout event without a customer or subscription, or with ids too long to keep', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      for (const object of [
        { ...session, customer: null },
        { ...session, subscription: null },
        { ...session, customer: { object: 'customer' } },
        { ...session, customer: `cus_${'x'.repeat(300)}` },
        { ...session, subscription: 42 },
      ]) {
        const completed = event('checkout.session.completed', object)
        const res = await post(completed)
        expect(res.status).toBe(400)
        expect(await res.json()).toEqual({
          success: false,
          error: `Event ${completed.id} does not carry a subscription Checkout`,
          code: 'INVALID_REQUEST',
        })
        expect(await recorded(completed.id)).toBe(false)
      }
      expect(await links(buyer.id)).toEqual([])
    })

    it('refuses a Checkout event signed with another secret', async () => {
      const buyer = await newBuyer()
      const completed = event('checkout.session.completed', await buy(buyer))
      const payload = JSON.stringify(completed)
      const forged = Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_someone_else' })
      const res = await post(payload, { signature: forged })
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ success: false, error: 'Invalid Stripe signature', code: 'INVALID_REQUEST' })
      expect(await recorded(completed.id)).toBe(false)
      expect(await links(buyer.id)).toEqual([])
      expect(await license(buyer)).toEqual({ valid: false, source: null })
    })
  })

  describe('subscription events for a customer not linked yet', () => {
    /** A subscription event as Stripe sends it for a subscription made without the account in its metadata. */
    function anonymous(type: string, session: CheckoutSession, fields: object, created: number) {
      const subscription = stripe.subscriptions.get(session.subscription ?? '')
      return event(type, { ...subscription, metadata: {}, ...fields }, created)
    }

    it('answers 503 until the Checkout links the customer, then applies the redelivery', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer, { periodEnd: 1_900_000_000 })
      const renewed = anonymous(
        'customer.subscription.updated',
        session,
        { items: { object: 'list', data: [{ id: 'si_1', current_period_end: 2_000_000_000 }] } },
        nowSeconds() + 60,
      )
      const early = await post(renewed)
      expect(early.status).toBe(503)
      expect(await early.json()).toEqual({
        success: false,
        error: `No account is linked to Stripe customer ${session.customer} yet: the event is refused so that Stripe sends it again`,
        code: 'UNAVAILABLE',
      })
      expect(await recorded(renewed.id)).toBe(false)

      expect((await post(event('checkout.session.completed', session))).status).toBe(200)
      expect(await subscriptionRows(buyer.id)).toMatchObject([{ current_period_end: new Date(1_900_000_000 * 1000) }])
      const redelivered = await post(renewed)
      expect(redelivered.status).toBe(200)
      expect(await redelivered.json()).toEqual({ received: true })
      expect(await subscriptionRows(buyer.id)).toMatchObject([
        { status: 'active', current_period_end: new Date(2_000_000_000 * 1000) },
      ])
    })

    it('keeps the newer state when an older event is redelivered after it', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      const created = anonymous('customer.subscription.created', session, { status: 'incomplete' }, nowSeconds() - 5)
      expect((await post(created)).status).toBe(503)
      expect((await post(event('checkout.session.completed', session))).status).toBe(200)
      expect(await license(buyer)).toEqual({ valid: true, source: 'subscription' })

      const redelivered = await post(created)
      expect(redelivered.status).toBe(200)
      expect(await recorded(created.id)).toBe(true)
      expect(await subscriptionRows(buyer.id)).toMatchObject([{ status: 'active' }])
      expect(await license(buyer)).toEqual({ valid: true, source: 'subscription' })
    })

    it('ignores an update older than the one recorded', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      const completed = event('checkout.session.completed', session)
      await post(completed)
      const period = (end: number) => ({ items: { object: 'list', data: [{ id: 'si_1', current_period_end: end }] } })
      const renewed = anonymous('customer.subscription.updated', session, period(2e9), completed.created + 100)
      const late = anonymous(
        'customer.subscription.updated',
        session,
        { ...period(1.95e9), status: 'past_due' },
        completed.created + 50,
      )
      expect((await post(renewed)).status).toBe(200)
      const res = await post(late)
      expect(res.status).toBe(200)
      expect(await recorded(late.id)).toBe(true)
      expect(await subscriptionRows(buyer.id)).toMatchObject([
        {
          status: 'active',
          current_period_end: new Date(2e9 * 1000),
          provider_state_at: new Date(renewed.created * 1000),
        },
      ])
      expect(await license(buyer)).toEqual({ valid: true, source: 'subscription' })
    })

    it('does not move a subscription back to incomplete, even with an event dated the same second', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      const completed = event('checkout.session.completed', session)
      await post(completed)
      const sameSecond = anonymous(
        'customer.subscription.created',
        session,
        { status: 'incomplete' },
        completed.created,
      )
      expect((await post(sameSecond)).status).toBe(200)
      expect(await license(buyer)).toEqual({ valid: true, source: 'subscription' })
    })

    it('records and ignores the end of a subscription no account is linked to: there is nothing to take away', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      const ended = anonymous('customer.subscription.deleted', session, {}, nowSeconds())
      const res = await post(ended)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ received: true })
      expect(await recorded(ended.id)).toBe(true)
      expect(await subscriptionRows(buyer.id)).toEqual([])
    })

    it("records and ignores a subscription to another price: it is not this cloud's", async () => {
      const customer = stripe.addCustomer('someone@example.com')
      const other = event('customer.subscription.created', {
        id: `sub_${randomUUID()}`,
        object: 'subscription',
        customer,
        status: 'active',
        metadata: {},
        items: {
          object: 'list',
          data: [{ id: 'si_2', price: { id: 'price_other_product' }, current_period_end: 2e9 }],
        },
      })
      const res = await post(other)
      expect(res.status).toBe(200)
      expect(await recorded(other.id)).toBe(true)
      const rows = await cloud.database.db.selectFrom('subscriptions').where('customer_id', '=', customer).execute()
      expect(rows).toEqual([])
    })
  })

  describe('Customer Portal', () => {
    it('opens for a linked customer, returning to the given page', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      await post(event('checkout.session.completed', session))
      const url = await billing().portal(buyer.id, `${cloud.url}/account`)
      const [request] = requestsTo('POST', '/v1/billing_portal/sessions').slice(-1)
      expect(request).toMatchObject({
        authorization: `Bearer ${secretKey}`,
        params: { customer: session.customer, return_url: `${cloud.url}/account` },
      })
      expect(url).toMatch(/^https:\/\/billing\.stripe\.test\/p\/session\/bps_/)
    })

    it('has nothing to open for an account without a Stripe customer', async () => {
      const buyer = await newBuyer()
      const before = stripe.requests.length
      expect(await billing().portal(buyer.id, `${cloud.url}/account`)).toBeUndefined()
      expect(stripe.requests.length).toBe(before)
    })

    it('drops the link of a customer deleted in the Stripe Dashboard', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      await post(event('checkout.session.completed', session))
      const customer = stripe.customers.get(session.customer ?? '')
      Object.assign(customer ?? {}, { deleted: true })
      expect(await billing().portal(buyer.id, `${cloud.url}/account`)).toBeUndefined()
      expect(await links(buyer.id)).toEqual([])
    })
  })

  describe('unlinkCustomer', () => {
    it("deletes the account's Stripe customer, which cancels its subscription, and the link", async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      await post(event('checkout.session.completed', session))
      await billing().unlinkCustomer(buyer.id)
      expect(requestsTo('DELETE', `/v1/customers/${session.customer}`)).toMatchObject([
        { authorization: `Bearer ${secretKey}` },
      ])
      expect(stripe.subscriptions.get(session.subscription ?? '')?.status).toBe('canceled')
      expect(await links(buyer.id)).toEqual([])
      expect(await billing().portal(buyer.id, `${cloud.url}/account`)).toBeUndefined()
      // An account without a customer has nothing to unlink.
      await billing().unlinkCustomer(buyer.id)
      expect(requestsTo('DELETE', `/v1/customers/${session.customer}`)).toHaveLength(1)
    })

    it('keeps the link when Stripe cannot be reached, so that deleting can be tried again', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      await post(event('checkout.session.completed', session))
      stripe.failing = true
      try {
        await expect(billing().unlinkCustomer(buyer.id)).rejects.toMatchObject({
          code: 'UNAVAILABLE',
          message: 'Stripe could not cancel the subscription just now: try again in a minute',
        })
      } finally {
        stripe.failing = false
      }
      expect(await links(buyer.id)).toHaveLength(1)
      await billing().unlinkCustomer(buyer.id)
      expect(await links(buyer.id)).toEqual([])
    })

    it('unlinks a customer Stripe no longer has', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      await post(event('checkout.session.completed', session))
      Object.assign(stripe.customers.get(session.customer ?? '') ?? {}, { deleted: true })
      await billing().unlinkCustomer(buyer.id)
      expect(await links(buyer.id)).toEqual([])
    })
  })

  it('answers 503 with a sentence when Stripe refuses the key', async () => {
    const other = await startTestCloud(kind, {
      database: cloud.database,
      env: { ...billingEnv(stripe), STRIPE_SECRET_KEY: 'sk_test_revoked' },
    })
    try {
      const buyer = await newBuyer()
      await expect(other.app.services.payments.billing.checkout(buyer, urls())).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: 'Stripe could not start a checkout just now: try again in a minute',
      })
      expect(stripe.requests.at(-1)?.authorization).toBe('Bearer sk_test_revoked')
    } finally {
      await other.close()
    }
  })

  describe('without STRIPE_SECRET_KEY', () => {
    let plain: TestCloud

    beforeAll(async () => {
      plain = await startTestCloud(kind, { database: cloud.database, env: { STRIPE_WEBHOOK_SECRET: webhookSecret } })
    })

    afterAll(async () => {
      await plain?.close()
    })

    it('says billing is not configured and starts nothing at Stripe', async () => {
      const { billing } = plain.app.services.payments
      expect(billing.configured).toBe(false)
      expect(cloud.app.services.payments.billing.configured).toBe(true)
      const buyer = await newBuyer()
      const before = stripe.requests.length
      const notConfigured = {
        code: 'UNAVAILABLE',
        message:
          'Billing is not configured on this cloud: an operator grants licenses with `npm run cloud -- users gift`',
      }
      await expect(billing.checkout(buyer, urls())).rejects.toMatchObject(notConfigured)
      await expect(billing.portal(buyer.id, `${plain.url}/account`)).rejects.toMatchObject(notConfigured)
      expect(stripe.requests.length).toBe(before)
    })

    it('links the customer of a completed Checkout and leaves the license to the subscription events', async () => {
      const buyer = await newBuyer()
      const session = await buy(buyer)
      const before = stripe.requests.length
      const completed = event('checkout.session.completed', session)
      expect((await post(completed, { base: plain.url })).status).toBe(200)
      expect(await links(buyer.id)).toMatchObject([{ customer_id: session.customer }])
      expect(await license(buyer)).toEqual({ valid: false, source: null })
      expect(stripe.requests.length).toBe(before)
      // Without a key nothing can be cancelled at Stripe: the link goes, and the log says what to do.
      await plain.app.services.payments.billing.unlinkCustomer(buyer.id)
      expect(await links(buyer.id)).toEqual([])
      expect(plain.logs.join('\n')).toContain('billing is not configured: cancel this customer in the Stripe Dashboard')
    })
  })
})

describe.each(databaseKinds)('migration 0009 on %s', (kind) => {
  it('links the customers of subscriptions mirrored before it to their accounts', async () => {
    const database = await createTestDatabase(kind)
    try {
      const { db } = database
      await stripeCustomers.down(db as Kysely<unknown>)
      const user = await createTestUser(db)
      const row = { user_id: user.id, provider: 'stripe', status: 'active', current_period_end: null }
      await db
        .insertInto('subscriptions')
        .values([
          { ...row, customer_id: 'cus_before', subscription_id: 'sub_before' },
          { ...row, provider: 'paddle', customer_id: 'ctm_before', subscription_id: 'sub_paddle' },
          { ...row, customer_id: `manual-${user.id}`, subscription_id: `manual-${user.id}` },
        ])
        .execute()
      await stripeCustomers.up(db as Kysely<unknown>)
      const links = await db.selectFrom('stripe_customers').select(['customer_id', 'user_id']).execute()
      expect(links).toEqual([{ customer_id: 'cus_before', user_id: user.id }])
    } finally {
      await database.dispose()
    }
  })
})

describe('billing configuration', () => {
  const base = { CLOUD_DATA_DIR: '/tmp/relay-cloud-config', STRIPE_WEBHOOK_SECRET: webhookSecret }

  it('is off without a key and a price', () => {
    expect(loadConfig(base).billing).toBeUndefined()
    expect(testConfig('/tmp/x').billing).toBeUndefined()
  })

  it('is on with both', () => {
    const env = { ...base, STRIPE_SECRET_KEY: secretKey, STRIPE_PRICE_ID: priceId }
    expect(loadConfig(env).billing).toEqual({ secretKey, priceId, apiUrl: undefined })
    const standIn = { ...env, STRIPE_API_URL: 'http://127.0.0.1:12111' }
    expect(loadConfig(standIn).billing?.apiUrl).toBe('http://127.0.0.1:12111')
  })

  function problems(env: Record<string, string>): readonly string[] {
    try {
      loadConfig({ ...base, ...env })
    } catch (err) {
      if (err instanceof ConfigError) {
        return err.problems
      }
      throw err
    }
    return []
  }

  it('refuses half a configuration, naming what is missing', () => {
    expect(problems({ STRIPE_SECRET_KEY: secretKey })).toEqual([
      'STRIPE_PRICE_ID: required when STRIPE_SECRET_KEY is set',
    ])
    expect(problems({ STRIPE_PRICE_ID: priceId })).toEqual(['STRIPE_SECRET_KEY: required when STRIPE_PRICE_ID is set'])
    expect(problems({ STRIPE_WEBHOOK_SECRET: '', STRIPE_SECRET_KEY: secretKey, STRIPE_PRICE_ID: priceId })).toEqual([
      'STRIPE_WEBHOOK_SECRET: required when STRIPE_SECRET_KEY is set (without webhooks a paid Checkout grants no license)',
    ])
  })

  it('refuses a key that is not a secret key without repeating it', () => {
    const found = problems({ STRIPE_SECRET_KEY: 'pk_test_published_key', STRIPE_PRICE_ID: priceId })
    expect(found).toEqual(['STRIPE_SECRET_KEY: must be a secret key (sk_…) or a restricted key (rk_…)'])
    expect(found.join()).not.toContain('pk_test_published_key')
  })

  it('refuses a price that is not a price id and an API address with a path', () => {
    expect(problems({ STRIPE_SECRET_KEY: secretKey, STRIPE_PRICE_ID: 'prod_123' })).toEqual([
      expect.stringMatching(/^STRIPE_PRICE_ID: /),
    ])
    expect(
      problems({ STRIPE_SECRET_KEY: secretKey, STRIPE_PRICE_ID: priceId, STRIPE_API_URL: 'http://127.0.0.1:1/v1' }),
    ).toEqual([
      'STRIPE_API_URL: must be an origin such as http://127.0.0.1:12111, without a path (got "http://127.0.0.1:1/v1")',
    ])
  })
})
