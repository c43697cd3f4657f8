import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import type { AuthMode } from '@relay/contracts'
import { migrateToLatest, type RouteEntry, routeTable, systemClock } from '@relay/server-kit'
import { freePort, pathForms, type RawResponse, rawRequest, samplePath, tempDir } from '@relay/testkit'
import { type Kysely, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testConfig, writeWebUi } from '../../test/app.js'
import { createApp } from '../app.js'
import { createFrontendSessions } from '../auth/frontend-sessions.js'
import { openDatabase } from '../db/database.js'
import { migrations } from '../db/migrations/index.js'
import type { RelayDB } from '../db/schema.js'
import { createAppSettings } from '../settings/service.js'

/**
 * Every route the relay registers, in every spelling of its path, by every kind of caller that
 * must be refused. The routes come from the app's own table, so a route added tomorrow is
 * attacked the day it is added.
 */

type Attack = { name: string; headers(session: string, port: number): Record<string, string> }

const forged = randomBytes(32).toString('base64url')
const cookie = (token: string) => `relay_session=${token}`

const withoutSession: Attack[] = [
  { name: 'no session', headers: () => ({}) },
  { name: 'forged session', headers: () => ({ cookie: cookie(forged) }) },
  { name: 'forged bearer token', headers: () => ({ authorization: `Bearer ${forged}` }) },
]

/** Refused even with a valid session: the request comes from another site or names another host. */
const foreign: Attack[] = [
  {
    name: 'cross-site Origin',
    headers: (session) => ({ cookie: cookie(session), origin: 'http://evil.example' }),
  },
  {
    name: 'cross-site Sec-Fetch-Site',
    headers: (session) => ({ cookie: cookie(session), 'sec-fetch-site': 'cross-site' }),
  },
  {
    name: 'same-site other port',
    headers: (session) => ({ cookie: cookie(session), origin: 'http://127.0.0.1:1', 'sec-fetch-site': 'same-site' }),
  },
  { name: 'foreign Host', headers: (session) => ({ cookie: cookie(session), host: 'evil.example' }) },
  {
    name: 'loopback Host with user info',
    headers: (session, port) => ({ cookie: cookie(session), host: `127.0.0.1:${port}@evil.example` }),
  },
]

const refused = [401, 403, 404]
const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS'])

function isPublic(route: RouteEntry, mode: AuthMode): boolean {
  return route.config.public === true || (route.config.public === 'cloud-mode' && mode === 'cloud')
}

/** Every row of every table: a request that reached a handler and changed anything shows here. */
async function snapshot(db: Kysely<RelayDB>): Promise<string> {
  const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table' order by name`.execute(
    db,
  )
  const dump: Record<string, unknown[]> = {}
  for (const { name } of tables.rows) {
    dump[name] = (await sql`select * from ${sql.table(name)}`.execute(db)).rows
  }
  return JSON.stringify(dump)
}

async function inBatches<T>(items: T[], size: number, run: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) {
    await Promise.all(items.slice(i, i + size).map(run))
  }
}

/** A relay listening on loopback in `mode`, with a valid session of a signed-in user. */
async function startInMode(mode: Exclude<AuthMode, 'none'>) {
  const folder = tempDir('relay-attack-')
  const database = openDatabase(path.join(folder.path, 'data'))
  await migrateToLatest(database.db, migrations)
  // Seeded as a relay whose setup is done: the cloud itself is not needed to be refused.
  await createAppSettings({ db: database.db, clock: systemClock }).save('auth', { mode, setupComplete: true })
  const user = { kind: mode, id: 'user-1', name: 'Ada', email: null }
  const session = await createFrontendSessions({ db: database.db, clock: systemClock }).create(user)
  const closed = await freePort()
  const config = testConfig(path.join(folder.path, 'data'), {
    RELAY_WEB_DIR: writeWebUi(path.join(folder.path, 'web')),
    CLOUD_URL: `http://127.0.0.1:${closed}`,
  })
  const app = await createApp(config, { database })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as AddressInfo).port
  const close = async () => {
    await app.close()
    await database.close()
    folder.remove()
  }
  return { app, db: database.db, port, session, close }
}

type Case = { route: RouteEntry; form: string; path: string; attack: Attack }

function casesFor(routes: readonly RouteEntry[], attacks: Attack[]): Case[] {
  return routes.flatMap((route) =>
    Object.entries(pathForms(samplePath(route.url))).flatMap(([form, path]) =>
      attacks.map((attack) => ({ route, form, path, attack })),
    ),
  )
}

function send(port: number, session: string, { route, path, attack }: Case): Promise<RawResponse> {
  const hasBody = !safeMethods.has(route.method) && route.method !== 'DELETE'
  return rawRequest(port, {
    method: route.method,
    path,
    headers: attack.headers(session, port),
    body: hasBody ? '{}' : undefined,
  })
}

const describeCase = ({ route, form, path, attack }: Case, res: RawResponse) =>
  `${route.method} ${route.url} as "${path}" (${form}), ${attack.name}: ${res.status} ${res.body.slice(0, 200)}`

describe.each(['local', 'cloud'] as const)(
  'relay in %s mode: every route, every path form, every foreign caller',
  (mode) => {
    let relay: Awaited<ReturnType<typeof startInMode>>
    beforeAll(async () => {
      relay = await startInMode(mode)
    })
    afterAll(async () => {
      await relay.close()
    })

    it('covers the whole route table, the API and the UI', () => {
      const urls = routeTable(relay.app).map((route) => route.url)
      expect(urls).toContain('/api/collectors')
      expect(urls).toContain('/api/unified-auth/mode')
      expect(urls).toContain('/api/connections/streams/:id/ws')
      expect(urls).toContain('/*')
      expect(routeTable(relay.app).length).toBeGreaterThan(50)
    })

    it('refuses callers without a valid session on every private route, and runs no handler', async () => {
      const { app, db, port, session } = relay
      const before = await snapshot(db)
      const privateRoutes = routeTable(app).filter((route) => !isPublic(route, mode))
      const failures: string[] = []
      await inBatches(casesFor(privateRoutes, withoutSession), 16, async (attack) => {
        const res = await send(port, session, attack)
        if (!refused.includes(res.status) || !isErrorBody(res)) {
          failures.push(describeCase(attack, res))
        }
      })
      expect(failures.join('\n')).toBe('')
      expect(await snapshot(db)).toBe(before)
    })

    it('refuses other sites and other Host names on every route, public ones included', async () => {
      const { app, db, port, session } = relay
      const before = await snapshot(db)
      const failures: string[] = []
      const cases = casesFor(routeTable(app), foreign).filter(
        // A link from another site may open a public page (the UI, a sign-in callback); it may not change anything.
        ({ route, attack }) =>
          !(isPublic(route, mode) && safeMethods.has(route.method) && attack.name.includes('site')),
      )
      await inBatches(cases, 16, async (attack) => {
        const res = await send(port, session, attack)
        if (!refused.includes(res.status) || !isErrorBody(res)) {
          failures.push(describeCase(attack, res))
        }
      })
      expect(failures.join('\n')).toBe('')
      expect(await snapshot(db)).toBe(before)
    })

    it('lets the same session through in the plain form: the refusals above are not an outage', async () => {
      const { port, session } = relay
      const res = await rawRequest(port, {
        method: 'GET',
        path: '/api/collectors',
        headers: { cookie: cookie(session) },
      })
      expect(res.status).toBe(200)
      const encoded = await rawRequest(port, {
        method: 'GET',
        path: '/%61pi/collectors',
        headers: { cookie: cookie(session) },
      })
      expect(encoded.status).toBe(200)
    })
  },
)

function isErrorBody(res: RawResponse): boolean {
  try {
    const body = JSON.parse(res.body) as { success?: unknown; error?: unknown; code?: unknown }
    return body.success === false && typeof body.error === 'string' && typeof body.code === 'string'
  } catch {
    return res.body === '' // HEAD answers carry no body
  }
}
