import type { BackupOperation } from '@relay/contracts'
import { sessionCookieName } from '@relay/contracts'
import type { HttpBrowser } from '@relay/testkit'
import { type Kysely, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { startTestCloud } from '../../../cloud/test/cloud-server.js'
import { databaseKinds } from '../../../cloud/test/database.js'
import { addCloudUser, createShiftedClock, signInThroughCloud, startLinkedRelay } from '../../test/cloud.js'
import { type Exchange, startRecordingProxy } from '../../test/recording-proxy.js'
import { filesUnder, findLeaks, type Haystack, type Secret } from '../../test/secret-scan.js'

/**
 * oidc-provider's interaction cookies hold the interaction's uid, which is also the path of the
 * sign-in page (`/interaction/<uid>`) and so appears in every request log by design; what signs
 * anybody in is the session cookie, the code and the tokens.
 */
const urlBorneCookies = new Set(['_interaction', '_interaction_resume'])

/** Every credential in the recorded traffic: tokens, codes, PKCE verifiers, cookie values. */
function secretsOnTheWire(exchanges: Exchange[]): Secret[] {
  const found = new Map<string, Secret>()
  const add = (kind: string, value: string | null | undefined) => {
    if (value && !found.has(value)) {
      found.set(value, { kind, value })
    }
  }
  const fromQuery = (params: URLSearchParams) => add('authorization code', params.get('code'))

  for (const exchange of exchanges) {
    const url = new URL(exchange.url, 'http://proxy')
    fromQuery(url.searchParams)
    const bearer = /^Bearer (.+)$/i.exec(exchange.requestHeaders.authorization ?? '')
    add('access token', bearer?.[1])
    if (url.pathname === '/oauth/token' || url.pathname === '/oauth/token/revocation') {
      const form = new URLSearchParams(exchange.requestBody.toString('utf8'))
      add('authorization code', form.get('code'))
      add('PKCE code verifier', form.get('code_verifier'))
      add('refresh token', form.get('refresh_token') ?? form.get('token'))
    }
    if (url.pathname === '/oauth/token' && exchange.status === 200) {
      const answer = JSON.parse(exchange.responseBody.toString('utf8')) as Record<string, string | undefined>
      add('access token', answer.access_token)
      add('refresh token', answer.refresh_token)
      add('ID token', answer.id_token)
    }
    const location = exchange.responseHeaders.location
    if (location) {
      fromQuery(new URL(location, url).searchParams)
    }
    for (const cookie of exchange.responseHeaders['set-cookie'] ?? []) {
      const [pair = ''] = cookie.split(';')
      const at = pair.indexOf('=')
      const name = pair.slice(0, at).trim()
      if (!urlBorneCookies.has(name)) {
        add(`cookie ${name}`, pair.slice(at + 1).trim())
      }
    }
  }
  return [...found.values()]
}

/** Every row of every table, as PostgreSQL prints it: what a dump of the database would hold. */
async function tableRows(db: Kysely<unknown>): Promise<Haystack[]> {
  const tables = await sql<{ schema: string; name: string }>`
    select table_schema as schema, table_name as name from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')
  `.execute(db)
  expect(tables.rows.map((table) => table.name)).toContain('oauth_payloads')
  return Promise.all(
    tables.rows.map(async ({ schema, name }) => {
      const table = sql.table(`${schema}.${name}`)
      const { rows } = await sql<{ row: string }>`select t::text as row from ${table} as t`.execute(db)
      return { where: `cloud table ${schema}.${name}`, bytes: Buffer.from(rows.map((r) => r.row).join('\n')) }
    }),
  )
}

async function call<T>(browser: HttpBrowser, url: string, init: RequestInit = {}): Promise<T> {
  const res = await browser.request(url, init)
  expect(res.status, url).toBeLessThan(300)
  return (await res.json()) as T
}

async function backUp(browser: HttpBrowser, relayUrl: string): Promise<BackupOperation> {
  const create = `${relayUrl}/api/cloud-backups/create`
  const { operationId } = await call<{ operationId: string }>(browser, create, { method: 'POST' })
  const deadline = Date.now() + 60_000
  for (;;) {
    const operation = await call<BackupOperation>(browser, `${relayUrl}/api/cloud-backups/operations/${operationId}`)
    if (operation.stage === 'done' || operation.stage === 'failed') {
      return operation
    }
    if (Date.now() > deadline) {
      throw new Error(`backup still ${operation.stage}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe.each(databaseKinds)('credentials at rest and in logs, cloud on %s', (kind) => {
  it('keeps every issued token out of both databases, both data folders and both logs', async () => {
    // Everything the browser and the relay send to the cloud, and the browser to the relay, goes
    // through a recording proxy: the test knows every credential issued, as a thief on the wire would.
    const cloudProxy = await startRecordingProxy()
    const relayProxy = await startRecordingProxy()
    const cloud = await startTestCloud(kind, {
      clock: createShiftedClock(),
      env: { CLOUD_PUBLIC_URL: cloudProxy.url, LOG_LEVEL: 'trace' },
    })
    try {
      cloudProxy.forwardTo(cloud.url)
      const user = await addCloudUser(cloud)
      const relay = await startLinkedRelay(cloud, { env: { CLOUD_URL: cloudProxy.url, LOG_LEVEL: 'trace' } })
      relayProxy.forwardTo(relay.url)

      // Cloud mode: the browser gets a relay session too.
      const { callback, browser } = await signInThroughCloud(cloud, relayProxy.url, user.email, {
        cloudUrl: cloudProxy.url,
        query: '?mode=cloud&returnTo=%2F',
      })
      expect(callback.headers.get('location')).toBe('/?cloud=connected')
      const refreshed = await call(browser, `${relayProxy.url}/api/unified-auth/tokens/force-refresh`, {
        method: 'POST',
      })
      expect(refreshed).toMatchObject({ success: true })
      expect((await backUp(browser, relayProxy.url)).stage).toBe('done')
      const { sessions } = await call<{ sessions: unknown[] }>(
        browser,
        `${relayProxy.url}/api/unified-auth/cloud/sessions`,
      )
      expect(sessions).toEqual([expect.objectContaining({ clientId: 'relay', current: true })])

      const secrets = secretsOnTheWire([...cloudProxy.exchanges, ...relayProxy.exchanges])
      const kinds = secrets.map((secret) => secret.kind)
      // The scan means something only if the flow issued what it should have.
      expect(kinds.filter((k) => k === 'refresh token').length).toBeGreaterThanOrEqual(2)
      expect(kinds.filter((k) => k === 'access token').length).toBeGreaterThanOrEqual(2)
      expect(kinds).toEqual(
        expect.arrayContaining([
          'authorization code',
          'PKCE code verifier',
          'ID token',
          'cookie _session',
          `cookie ${sessionCookieName}`,
        ]),
      )

      const haystacks: Haystack[] = [
        ...filesUnder(cloud.database.dataDir, 'cloud file'),
        ...(await tableRows(cloud.database.db as Kysely<unknown>)),
        ...filesUnder(relay.dataDir, 'relay file'),
        { where: 'cloud log', bytes: Buffer.from(cloud.logs.join('')) },
        { where: 'relay log', bytes: Buffer.from(relay.logs.join('')) },
      ]
      expect(haystacks.some((h) => h.where.includes('relay.db'))).toBe(true)
      expect(cloud.logs.length).toBeGreaterThan(0)
      expect(relay.logs.join('')).toContain('cloud access token refreshed')
      expect(findLeaks(secrets, haystacks)).toEqual([])
    } finally {
      await cloud.close()
      await cloudProxy.close()
      await relayProxy.close()
    }
  })
})
