import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { ErrorBody, relayClientId, relayScope } from '@relay/contracts'
import { type RouteEntry, routeTable } from '@relay/server-kit'
import {
  anyJson,
  createHttpBrowser,
  defined,
  type FuzzedRequest,
  fuzzBudgetMs,
  fuzzCheck,
  fuzzedRequest,
  invalidValue,
  type JsonSchema,
  percentEncode,
  validValue,
} from '@relay/testkit'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import Stripe from 'stripe'
import { Value } from 'typebox/value'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { type Caller, newCaller, putUpload } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { databaseKinds } from '../../test/database.js'
import { registrationPaths } from '../registration/paths.js'

const command = 'TEST_DATABASE_URL=… npx vitest run --project cloud apps/cloud/src/security/fuzz.test.ts'
/** About 30 routes and three extra surfaces per database: well over a thousand cases per run. */
const runsPerRoute = 40
const runsPerSurface = 100
const testTimeout = fuzzBudgetMs + 30_000

const webhookSecret = 'whsec_fuzz_secret'
const password = 'correct horse battery'
/** Buckets too deep to drain: every request reaches its handler instead of a 429. */
const unlimited = { capacity: 1_000_000, refillEvery: 1 }

/**
 * Fuzzed apart from the route loop: the authorization server mount (oidc-provider answers every
 * path under /oauth itself, in its own error shape) and the embedded S3 endpoint (S3's XML errors).
 */
const isSurface = (route: RouteEntry) => route.url.startsWith('/oauth') || route.url.startsWith('/s3/')

const isSignInPage = (url: string) => url.startsWith('/interaction/')
const isAccountPage = (url: string) => url === '/account' || url.startsWith('/account/')
const registrationPages: string[] = Object.values(registrationPaths)
/** The sign-in, registration and account pages answer in HTML, errors included: a browser shows them. */
const answersHtml = (url: string) =>
  isSignInPage(url) || isAccountPage(url) || registrationPages.includes(url.split('?')[0] ?? '')

/**
 * The sign-in form posts `email` and `password`; its route declares no schema because
 * oidc-provider, not a validator, owns the interaction. These are the fields a browser sends.
 */
const signInForm: JsonSchema = {
  type: 'object',
  properties: {
    email: { type: 'string', format: 'email', maxLength: 255 },
    password: { type: 'string', minLength: 1, maxLength: 200 },
  },
}

const backupFile = randomBytes(4096)

async function backUp(caller: Caller, backendId: string, complete = true): Promise<string> {
  const grant = await caller.call('POST', '/cloud-backups/request-upload', {
    filename: 'relay-backup.zip',
    backendId,
    uncompressedSize: backupFile.length * 2,
    compressedSize: backupFile.length,
    sha256: createHash('sha256').update(backupFile).digest('hex'),
  })
  expect(grant.status).toBe(200)
  const body = (await grant.json()) as { backupId: string; uploadUrl: string; uploadHeaders: Record<string, string> }
  if (complete) {
    expect((await putUpload(body, backupFile)).status).toBe(200)
    const done = await caller.call('POST', '/cloud-backups/complete-upload', {
      backupId: body.backupId,
      actualCompressedSize: backupFile.length,
    })
    expect(done.status).toBe(200)
  }
  return body.backupId
}

/** A cloud with a Pro user and a token, another user's backup, and the pieces every surface needs. */
async function startWorld(kind: (typeof databaseKinds)[number]) {
  const cloud = await startTestCloud(kind, {
    env: { LOG_LEVEL: 'error', STRIPE_WEBHOOK_SECRET: webhookSecret },
    overrides: { rateLimitPolicies: { dashboard: unlimited, backup: unlimited } },
  })
  const caller = await newCaller(cloud)
  const stranger = await newCaller(cloud)
  const strangersBackup = await backUp(stranger, 'stranger-relay')
  const account = defined(await cloud.app.services.directory.find(caller.id))
  return { cloud, caller, strangersBackup, email: account.email }
}

function lastErrorLog(cloud: TestCloud): string {
  return cloud.logs.filter((line) => /"level":(50|60)/.test(line)).at(-1) ?? '(no error logged)'
}

function describeAnswer(
  request: Pick<FuzzedRequest, 'method' | 'url'> & { variant?: string },
  res: LightMyRequestResponse,
) {
  return `${request.method} ${request.url.slice(0, 300)} [${request.variant ?? ''}] → ${res.statusCode} ${res.body.slice(0, 300)}`
}

function isErrorBody(res: LightMyRequestResponse): boolean {
  try {
    return /^application\/json/.test(String(res.headers['content-type'])) && Value.Check(ErrorBody, res.json())
  } catch {
    return false
  }
}

function expectSafeAnswer(cloud: TestCloud, request: FuzzedRequest, res: LightMyRequestResponse) {
  const context = describeAnswer(request, res)
  expect(res.statusCode < 500, `${context}\n${lastErrorLog(cloud)}`).toBe(true)
  if (res.statusCode >= 400 && request.method !== 'HEAD') {
    if (answersHtml(request.url) && /^text\/html/.test(String(res.headers['content-type']))) {
      return
    }
    expect(isErrorBody(res), context).toBe(true)
  }
}

for (const kind of databaseKinds) {
  const { cloud, caller, strangersBackup, email } = await startWorld(kind)
  const app = cloud.app
  let cases = 0
  const own = { completed: [] as string[], pending: [] as string[] }
  /** The sign-in in progress: its uid and the browser cookies that go with it. */
  let interaction = { uid: '', cookie: '' }

  afterAll(async () => {
    await cloud.close()
    console.info(`cloud fuzz on ${kind}: ${cases} requests`)
  })

  async function seedBackups() {
    const list = await caller.call('GET', '/cloud-backups/list?limit=100')
    const { backups } = (await list.json()) as { backups: Array<{ id: string; status: string }> }
    own.completed = backups.filter((backup) => backup.status === 'completed').map((backup) => backup.id)
    own.pending = backups.filter((backup) => backup.status === 'pending').map((backup) => backup.id)
    if (own.completed.length === 0) {
      own.completed.push(await backUp(caller, 'fuzz-relay'))
    }
    if (own.pending.length === 0) {
      own.pending.push(await backUp(caller, 'fuzz-relay', false))
    }
  }

  /** Starts a relay's sign-in the way a browser does, up to the cloud's sign-in page. */
  async function startSignIn() {
    const browser = createHttpBrowser()
    const authorize = new URL(`${cloud.url}/oauth/auth`)
    authorize.search = new URLSearchParams({
      client_id: relayClientId,
      response_type: 'code',
      redirect_uri: 'http://127.0.0.1:53682/api/unified-auth/cloud/callback',
      scope: relayScope,
      code_challenge: createHash('sha256').update('verifier').digest('base64url'),
      code_challenge_method: 'S256',
      state: 'fuzz',
    }).toString()
    const page = await browser.follow(authorize)
    expect(page.url.pathname).toMatch(/^\/interaction\//)
    await page.response.text()
    const cookies = browser.cookies(new URL(cloud.url).host)
    interaction = {
      uid: defined(page.url.pathname.split('/')[2]),
      cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
    }
  }

  function send(request: Pick<FuzzedRequest, 'method' | 'url' | 'headers' | 'payload'>) {
    return app.inject({
      method: request.method as 'GET',
      url: request.url,
      headers: {
        authorization: `Bearer ${caller.token}`,
        ...(interaction.cookie ? { cookie: interaction.cookie } : {}),
        ...request.headers,
      },
      ...(request.payload === undefined ? {} : { payload: request.payload }),
    })
  }

  // The token is minted, not issued at a sign-in: it belongs to no session, so POST /auth/logout
  // (409) cannot end it and every route is fuzzed with valid input too.
  async function fuzzRoute(route: RouteEntry, name: string) {
    const isSignIn = isSignInPage(route.url)
    if (isSignIn) {
      await startSignIn()
    } else {
      await seedBackups()
    }
    const arbitrary = fuzzedRequest(
      route.url.endsWith('/login') && isSignIn ? { ...route, schema: { body: signInForm } } : route,
      {
        known: {
          // Own backups, finished and not, and another user's, which must stay out of reach.
          backupId: [...own.completed, ...own.pending, strangersBackup],
          backendId: ['fuzz-relay', 'stranger-relay'],
          uid: [interaction.uid],
          email: [email],
          password: [password],
        },
      },
    )
    cases += await fuzzCheck(
      name,
      arbitrary,
      async (request) => expectSafeAnswer(cloud, request, await send(request)),
      { numRuns: runsPerRoute, command },
    )
  }

  const routes = routeTable(app).filter((route) => !isSurface(route))

  describe(`cloud on ${kind}: every route answers fuzzed input without a 5xx, a hang or a malformed error`, () => {
    beforeEach(() => {
      cloud.logs.length = 0
      interaction = { uid: '', cookie: '' }
    })

    it('covers the route table', () => {
      expect(routes.length).toBeGreaterThan(20)
      expect(routeTable(app).filter(isSurface).length).toBeGreaterThan(0)
    })

    for (const route of routes) {
      const name = `${route.method} ${route.url} on ${kind}`
      it(name, () => fuzzRoute(route, name), testTimeout)
    }

    /** A webhook delivery signed with the endpoint's secret, as the payment provider sends it. */
    const signedEvent = (event: unknown): FuzzedRequest => {
      const payload = typeof event === 'string' ? event : JSON.stringify(event)
      return {
        method: 'POST',
        url: '/webhooks/stripe',
        headers: {
          'content-type': 'application/json',
          'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }),
        },
        payload,
        variant: 'signed event',
      }
    }

    it(
      `POST /webhooks/stripe with signed events on ${kind}`,
      async () => {
        cases += await fuzzCheck(
          `POST /webhooks/stripe with signed events on ${kind}`,
          stripeEvents(caller.id),
          async (event) => {
            const request = signedEvent(event)
            const res = await send(request)
            // A subscription of a customer no account is linked to yet is refused on purpose, so that
            // Stripe sends it again once the checkout that links them has arrived (payments tests).
            if (res.statusCode === 503 && isErrorBody(res) && /^No account is linked/.test(res.json().error)) {
              return
            }
            expectSafeAnswer(cloud, request, res)
          },
          { numRuns: runsPerSurface, command },
        )
      },
      testTimeout,
    )

    it(`POST /webhooks/stripe applies a subscription whose period end no date can hold on ${kind}`, async () => {
      for (const items of [
        { data: [{ current_period_end: 1e300 }] },
        { data: [{ current_period_end: -1e11 }] },
        { data: [null, { current_period_end: 'soon' }] },
        { data: 'not a list' },
      ]) {
        const request = signedEvent({
          id: `evt_${randomUUID()}`,
          object: 'event',
          type: 'customer.subscription.updated',
          data: {
            object: {
              id: `sub_${randomUUID()}`,
              object: 'subscription',
              customer: 'cus_far_future',
              status: 'active',
              metadata: { userId: caller.id },
              items,
            },
          },
        })
        const res = await send(request)
        expect(res.json(), `${JSON.stringify(items)}\n${lastErrorLog(cloud)}`).toEqual({ received: true })
      }
    })

    it(`answers text with a NUL in it, which PostgreSQL cannot store, without a 5xx on ${kind}`, async () => {
      await startSignIn()
      const answers = [
        await send({
          method: 'POST',
          url: `/interaction/${interaction.uid}/login`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `email=${percentEncode(`a\u0000${email}`)}&password=${percentEncode(password)}`,
        }),
        await send({ method: 'DELETE', url: '/auth/sessions/a%00b', headers: {} }),
        await send(signedEvent({ id: 'evt_\u0000', object: 'event', type: 'invoice.paid', data: {} })),
        await send(
          signedEvent({
            id: `evt_${randomUUID()}`,
            object: 'event',
            type: 'customer.subscription.updated',
            data: { object: { id: 'sub_\u0000', customer: 'cus_\u0000', status: 'active' } },
          }),
        ),
      ]
      expect(answers.map((res) => res.statusCode)).toEqual([401, 400, 400, 400])
    })

    // oidc-provider looks a client up by the client_id as sent: an id PostgreSQL cannot store is an
    // unknown client (invalid_client, 400), never a failed query.
    it(`GET /oauth/auth with a NUL in client_id answers without a 5xx on ${kind}`, async () => {
      const res = await app.inject({ method: 'GET', url: '/oauth/auth?client_id=re%00lay&response_type=code' })
      expect(res.statusCode).toBeLessThan(500)
    })

    it(
      `the embedded S3 endpoint with tampered URLs on ${kind}`,
      async () => {
        await seedBackups()
        const download = await caller.call('POST', `/cloud-backups/${defined(own.completed[0])}/request-download`)
        const grant = (await download.json()) as { downloadUrl: string }
        const signed = new URL(grant.downloadUrl)
        cases += await fuzzCheck(
          `the embedded S3 endpoint with tampered URLs on ${kind}`,
          s3Requests(signed),
          async (request) => {
            const res = await app.inject({
              method: request.method as 'GET',
              url: request.url,
              headers: request.headers,
            })
            const context = describeAnswer(request, res)
            // S3's answer to an operation the store does not do (a sub-resource, a bucket request) is 501.
            const notImplemented =
              res.statusCode === 501 && (request.method === 'HEAD' || /<Code>NotImplemented<\/Code>/.test(res.body))
            expect(res.statusCode < 500 || notImplemented, `${context}\n${lastErrorLog(cloud)}`).toBe(true)
            if (res.statusCode >= 400 && request.method !== 'HEAD') {
              // S3's XML inside the store; a path normalised out of it gets the app's own 404.
              const isS3Error =
                /xml/.test(String(res.headers['content-type'])) && /<Error><Code>\w+<\/Code>/.test(res.body)
              expect(isS3Error || isErrorBody(res), context).toBe(true)
            }
          },
          { numRuns: runsPerSurface, command },
        )
      },
      testTimeout,
    )

    it(
      `the authorization server under /oauth on ${kind}`,
      async () => {
        cases += await fuzzCheck(
          `the authorization server under /oauth on ${kind}`,
          oauthRequests(),
          async (request) => {
            const res = await app.inject({
              method: request.method as 'GET',
              url: request.url,
              headers: request.headers,
              ...(request.payload === undefined ? {} : { payload: request.payload }),
            })
            const context = describeAnswer(request, res)
            expect(res.statusCode < 500, `${context}\n${lastErrorLog(cloud)}`).toBe(true)
            // RFC 6749 §5.2: the token endpoint's errors are { error, error_description }.
            if (res.statusCode >= 400 && /^application\/json/.test(String(res.headers['content-type']))) {
              expect(res.json(), context).toMatchObject({ error: expect.any(String) })
            }
          },
          { numRuns: runsPerSurface, command },
        )
      },
      testTimeout,
    )
  })
}

/** Subscription events as the payment provider signs them, with every field sometimes wrong. */
function stripeEvents(userId: string): fc.Arbitrary<unknown> {
  const text = (maxLength: number): JsonSchema => ({ type: 'string', minLength: 1, maxLength })
  const subscription: JsonSchema = {
    type: 'object',
    required: ['id', 'customer', 'status'],
    properties: {
      id: text(300),
      object: { const: 'subscription' },
      customer: { anyOf: [text(300), { type: 'object', properties: { id: text(300) } }] },
      status: { enum: ['active', 'trialing', 'past_due', 'canceled', 'unpaid', 'incomplete'] },
      metadata: { type: 'object', properties: { userId: text(64) } },
      items: {
        type: 'object',
        properties: {
          data: { type: 'array', items: { type: 'object', properties: { current_period_end: { type: 'integer' } } } },
        },
      },
    },
  }
  const event: JsonSchema = {
    type: 'object',
    required: ['id', 'object', 'type', 'data'],
    properties: {
      id: text(300),
      object: { const: 'event' },
      type: {
        enum: [
          'customer.subscription.created',
          'customer.subscription.updated',
          'customer.subscription.deleted',
          'invoice.paid',
        ],
      },
      data: { type: 'object', required: ['object'], properties: { object: subscription } },
    },
  }
  const options = {
    known: {
      userId: [userId, 'not-a-uuid', '00000000-0000-4000-8000-000000000000'],
      customer: ['cus_fuzz'],
      current_period_end: [1_800_000_000, 1e300, -1e20],
      id: ['sub_fuzz', 'evt_fuzz'],
    },
  }
  return fc.oneof(
    { arbitrary: validValue(event, options), weight: 3 },
    { arbitrary: invalidValue(event, options), weight: 2 },
    { arbitrary: anyJson(), weight: 1 },
  )
}

type RawRequest = { method: string; url: string; headers: Record<string, string>; payload?: string; variant: string }

/** The signed download URL with one part changed: a query value, the key, the method or a header. */
function s3Requests(signed: URL): fc.Arbitrary<RawRequest> {
  const names = [...signed.searchParams.keys()]
  const junk = fc.oneof(
    fc.constantFrom('', '0', '-1', '99999999999999999999', '20261399T999999Z', 'AKIA/../x', '%', '\u0000'),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constant('a'.repeat(10_000)),
  )
  const withParam = fc.tuple(fc.constantFrom(...names, 'X-Amz-Extra', 'x-id'), junk).map(([name, value]) => {
    const url = new URL(signed)
    url.searchParams.set(name, value)
    return `${url.pathname}${url.search}`
  })
  const withPath = fc
    .constantFrom('', '/', '/..', '/%2e%2e/x', '//x', '/%00', '/a%2Fb', '/..%2F..%2Fetc', '/%zz')
    .map((suffix) => `${signed.pathname.split('/').slice(0, 3).join('/')}${suffix}${signed.search}`)
  const withKey = fc
    .string({ unit: 'binary', minLength: 1, maxLength: 40 })
    .map((key) => `${signed.pathname.split('/').slice(0, 3).join('/')}/${percentEncode(key)}${signed.search}`)
  return fc
    .tuple(
      fc.oneof(withParam, withPath, withKey, fc.constant(`${signed.pathname}${signed.search}`)),
      fc.constantFrom('GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'PATCH'),
      fc.constantFrom<Record<string, string>>(
        {},
        { range: 'bytes=5-2' },
        { range: 'bytes=-99999999999999999999' },
        { 'content-length': '5' },
        { authorization: 'AWS4-HMAC-SHA256 Credential=x/y, SignedHeaders=host, Signature=00' },
        { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'x-amz-date': '0' },
      ),
    )
    .map(([url, method, headers]) => ({ method, url, headers, variant: 'tampered S3 URL' }))
}

/** Requests to the authorization server's endpoints: known paths, odd parameters, odd bodies. */
function oauthRequests(): fc.Arbitrary<RawRequest> {
  const param = fc.tuple(
    fc.constantFrom(
      'client_id',
      'grant_type',
      'code',
      'refresh_token',
      'redirect_uri',
      'code_verifier',
      'scope',
      'response_type',
      'state',
      'token',
      'client_assertion',
      'client_assertion_type',
      'prompt',
      'request',
      '__proto__',
    ),
    fc.oneof(
      fc.constantFrom(
        relayClientId,
        'authorization_code',
        'refresh_token',
        'client_credentials',
        'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        relayScope,
        'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
        'http://127.0.0.1:1/cb',
      ),
      fc.string({ unit: 'binary', maxLength: 30 }),
      fc.constant('x'.repeat(5000)),
    ),
  )
  const form = fc.array(param, { maxLength: 6 }).map((pairs) => new URLSearchParams(pairs).toString())
  const path = fc.constantFrom(
    '/oauth/auth',
    '/oauth/token',
    '/oauth/token/revocation',
    '/oauth/jwks',
    '/oauth/me',
    '/oauth/session/end',
    '/oauth/.well-known/openid-configuration',
    '/oauth/reg',
    '/oauth/nope',
    '/oauth/%zz',
    '/oauth/auth/..%2F..%2Fhealthz',
  )
  return fc
    .tuple(
      path,
      fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
      form,
      form,
      fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain'),
    )
    .map(
      ([at, method, query, body, type]): RawRequest => ({
        method,
        url: query ? `${at}?${query}` : at,
        headers: method === 'GET' ? {} : { 'content-type': type },
        ...(method === 'GET' ? {} : { payload: type === 'application/json' ? JSON.stringify({ body }) : body }),
        variant: 'oauth',
      }),
    )
}
