import path from 'node:path'
import { collectorSettingsSchemas, ErrorBody, sessionCookieName, streamSettingsSchemas } from '@relay/contracts'
import { type RouteEntry, routeTable } from '@relay/server-kit'
import {
  createHttpBrowser,
  defined,
  type FuzzedRequest,
  type FuzzOptions,
  fuzzBudgetMs,
  fuzzCheck,
  fuzzedRequest,
  type JsonSchema,
  tempDir,
} from '@relay/testkit'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { Value } from 'typebox/value'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { testConfig, writeWebUi } from '../../test/app.js'
import { addCloudUser, signInThroughCloud, startCloud } from '../../test/cloud.js'
import { createApp } from '../app.js'

const command = 'npx vitest run --project relay apps/relay/src/security/fuzz.test.ts'
/** About 85 routes at 24 runs, and the cloud-down pass: over 2,000 requests per run. */
const runsPerRoute = 24
const runsPerRouteWithoutCloud = 8
const testTimeout = fuzzBudgetMs + 30_000

/**
 * Routes whose success would end this test's own session or change the auth mode: fuzzed only with
 * input that must be refused before the handler (unparseable or oversize bodies, foreign content
 * types), so the routes after them still run signed in, in local mode, connected to the cloud.
 */
const refusedOnly = new Set([
  'POST /api/unified-auth/logout', // ends the session the fuzzer signs in with
  'POST /api/unified-auth/mode', // switches the relay out of local mode
  'POST /api/unified-auth/cloud/logout', // disconnects the relay from the cloud
])

/**
 * Not fuzzed: the static UI wildcard, which serves files from disk and has no schema to fuzz from.
 * The WebSocket route is fuzzed as plain HTTP only: its upgrade is a protocol switch `inject`
 * cannot make.
 */
const isSkipped = (route: RouteEntry) => route.url.endsWith('*')

/** Routes that call the cloud: an unreachable or failing cloud may honestly make them 502/503/504. */
const callsCloud = (route: RouteEntry) =>
  route.url.startsWith('/api/unified-auth') || route.url.startsWith('/api/cloud-backups')

// One relay for every route: connected to a real cloud, then set up in local mode with a session.
const cloud = await startCloud()
const user = await addCloudUser(cloud)
const folder = tempDir('relay-fuzz-')
const account = { username: 'ada', password: 'correct horse battery' }
const logs: string[] = []
const app = await createApp(
  testConfig(path.join(folder.path, 'data'), {
    RELAY_WEB_DIR: writeWebUi(path.join(folder.path, 'web')),
    CLOUD_URL: cloud.url,
    LOG_LEVEL: 'error',
  }),
  { logStream: { write: (line) => void logs.push(line) } },
)
const relayUrl = await app.listen({ port: 0, host: '127.0.0.1' })
await signInThroughCloud(cloud, relayUrl, user.email, { browser: createHttpBrowser() })
const setup = await app.inject({
  method: 'POST',
  url: '/api/unified-auth/local/setup',
  headers: { 'content-type': 'application/json' },
  payload: JSON.stringify(account),
})
expect(setup.statusCode, setup.body).toBe(201)
const session = defined(setup.cookies.find((cookie) => cookie.name === sessionCookieName)).value
let cloudUp = true
let cases = 0

afterAll(async () => {
  await app.close()
  if (cloudUp) {
    await cloud.close()
  }
  folder.remove()
  console.info(`relay fuzz: ${cases} requests`)
})

function send(request: Pick<FuzzedRequest, 'method' | 'url' | 'headers' | 'payload'>) {
  return app.inject({
    method: request.method as 'GET',
    url: request.url,
    headers: { cookie: `${sessionCookieName}=${session}`, ...request.headers },
    ...(request.payload === undefined ? {} : { payload: request.payload }),
  })
}

async function created(url: string, body: object): Promise<string> {
  const res = await send({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  })
  expect([200, 201, 202], `${url}: ${res.body}`).toContain(res.statusCode)
  const json = res.json()
  return defined(json.id ?? json.operationId ?? json.notification?.id, `id from ${url}`)
}

async function exists(url: string): Promise<boolean> {
  return (await send({ method: 'GET', url, headers: {} })).statusCode === 200
}

/** Ids of things that exist, so valid requests reach the handlers' success paths. */
const seeded = {
  collectors: [] as string[],
  streams: [] as string[],
  junctions: [] as string[],
  notifications: [] as string[],
  backups: [] as string[],
  operations: [] as string[],
}

async function keep(list: string[], base: string, make: () => Promise<string>) {
  const alive: string[] = []
  for (const id of list) {
    if (await exists(`${base}/${id}`)) {
      alive.push(id)
    }
  }
  list.splice(0, list.length, ...(alive.length > 0 ? alive : [await make()]))
}

async function backUpOnce(): Promise<void> {
  const operation = await created('/api/cloud-backups/create', {})
  for (;;) {
    const res = await send({ method: 'GET', url: `/api/cloud-backups/operations/${operation}`, headers: {} })
    const { stage } = res.json()
    if (stage === 'done' || stage === 'failed') {
      expect(stage, res.body).toBe('done')
      break
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  seeded.operations.push(operation)
  const list = await send({ method: 'GET', url: '/api/cloud-backups/list', headers: {} })
  seeded.backups.push(...list.json().backups.map((backup: { id: string }) => backup.id))
}

await backUpOnce()

async function seed() {
  await keep(seeded.collectors, '/api/collectors', () =>
    created('/api/collectors', { name: 'fuzz', collectorType: 'Virtual', settings: { sensorCount: 2 } }),
  )
  await keep(seeded.streams, '/api/connections/streams', () =>
    created('/api/connections/streams', { name: 'fuzz', type: 'Virtual' }),
  )
  await keep(seeded.junctions, '/api/junctions', () =>
    created('/api/junctions', {
      name: 'fuzz',
      collectorIds: seeded.collectors,
      targets: seeded.streams.map((streamId) => ({ streamId, sendRateMs: 1000 })),
    }),
  )
  await keep(seeded.notifications, '/api/notifications', () =>
    created('/api/notifications', { message: 'fuzz', persistent: true }),
  )
}

/** Valid values that exist, by the property or param name a route uses for them. */
function fuzzOptions(route: RouteEntry): FuzzOptions {
  const idsOf = (url: string): string[] => {
    if (url.startsWith('/api/collectors')) {
      return seeded.collectors
    }
    if (url.startsWith('/api/connections/streams')) {
      return seeded.streams
    }
    if (url.startsWith('/api/junctions')) {
      return seeded.junctions
    }
    if (url.startsWith('/api/notifications')) {
      return seeded.notifications
    }
    if (url.startsWith('/api/cloud-backups/operations')) {
      return seeded.operations
    }
    // Never the relay's own cloud session: revoking it would disconnect the routes fuzzed after it.
    return []
  }
  const settings = route.url.startsWith('/api/collectors') ? collectorSettingsSchemas : streamSettingsSchemas
  return {
    known: {
      id: idsOf(route.url),
      // Restoring a real backup would replace the database under the routes fuzzed after it.
      backupId: route.url.endsWith('/restore') ? [] : seeded.backups,
      collectorIds: seeded.collectors,
      streamId: seeded.streams,
      ids: seeded.notifications,
      // The account's own name and password, so some sign-ins succeed.
      username: [account.username],
      password: [account.password],
    },
    refine: {
      settings: { anyOf: Object.values(settings) as JsonSchema[] },
      // Drivers connect to these: keep them on a closed local port, never a generated host.
      url: { const: 'http://127.0.0.1:9/data' },
      brokerUrl: { const: 'mqtt://127.0.0.1:9' },
      path: { const: '/nonexistent/relay-fuzz-port' },
    },
  }
}

/** Same-origin or no Origin: what the relay's own UI and a script on the machine send. */
const origins: Record<string, string>[] = [{}, { origin: 'http://localhost' }]

function lastErrorLog(): string {
  return logs.filter((line) => /"level":(50|60)/.test(line)).at(-1) ?? '(no error logged)'
}

function expectSafeAnswer(
  request: FuzzedRequest,
  res: LightMyRequestResponse,
  { upstream, refused }: { upstream: boolean; refused: boolean },
) {
  const context = `${request.method} ${request.url} [${request.variant}] → ${res.statusCode} ${res.body.slice(0, 300)}`
  const honestUpstream = upstream && [502, 503, 504].includes(res.statusCode)
  expect(res.statusCode < 500 || honestUpstream, `${context}\n${lastErrorLog()}`).toBe(true)
  if (refused) {
    expect(res.statusCode, `reached the handler: ${context}`).toBeGreaterThanOrEqual(400)
  }
  if (res.statusCode >= 400 && request.method !== 'HEAD') {
    expect(res.headers['content-type'], context).toMatch(/^application\/json/)
    expect(Value.Check(ErrorBody, res.json()), context).toBe(true)
  }
}

async function fuzzRoute(route: RouteEntry, name: string, numRuns: number) {
  await seed()
  const refused = refusedOnly.has(`${route.method} ${route.url}`)
  const arbitrary = fuzzedRequest(route, { ...fuzzOptions(route), refusedOnly: refused })
  const upstream = callsCloud(route)
  cases += await fuzzCheck(
    name,
    fc.tuple(arbitrary, fc.constantFrom(...origins)),
    async ([request, origin]) => {
      const answer = await send({ ...request, headers: { ...origin, ...request.headers } })
      expectSafeAnswer(request, answer, { upstream, refused })
    },
    { numRuns, command },
  )
}

const routes = routeTable(app).filter((route) => !isSkipped(route))

describe('relay: every route answers fuzzed input without a 5xx, a hang or a malformed error', () => {
  beforeEach(() => {
    logs.length = 0
  })

  it('covers the route table', () => {
    expect(routes.length).toBeGreaterThan(50)
    expect(
      routeTable(app)
        .filter(isSkipped)
        .map((route) => route.url),
    ).toEqual(['/*', '/*'])
  })

  for (const route of routes) {
    const name = `${route.method} ${route.url}`
    it(name, () => fuzzRoute(route, name, runsPerRoute), testTimeout)
  }
})

describe('relay: routes that call the cloud, with the cloud gone', () => {
  it('stops the cloud', async () => {
    await cloud.close()
    cloudUp = false
  })

  for (const route of routes.filter(callsCloud)) {
    const name = `${route.method} ${route.url} (cloud down)`
    it(name, () => fuzzRoute(route, name, runsPerRouteWithoutCloud), testTimeout)
  }
})
