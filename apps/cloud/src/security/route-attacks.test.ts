import { createHash, randomBytes } from 'node:crypto'
import { relayClientId, type UploadGrant } from '@relay/contracts'
import { type RouteEntry, routeTable } from '@relay/server-kit'
import { defined, pathForms, type RawResponse, rawRequest, samplePath } from '@relay/testkit'
import { exportJWK, generateKeyPair, importJWK, SignJWT } from 'jose'
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Caller, newCaller, putUpload } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { databaseKinds } from '../../test/database.js'
import { sessionIdOf } from '../auth/service.js'
import { registerDeviceClient } from '../oauth/clients.js'
import { grantFirstParty } from '../oauth/provider.js'

type DeviceKey = Parameters<typeof client.PrivateKeyJwt>[0]

/** Header sets that must change nothing: the app's own view of the request, and someone else's. */
const hostVariants: Record<string, Record<string, string>> = {
  'own host': {},
  'foreign host': { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
}

const concurrency = 8

/** Runs `task` over `items`, a few at a time: one app, and two cores shared with other work. */
async function inPool<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T
      await task(item)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}

describe.each(databaseKinds)('every private cloud route under attack on %s', (kind) => {
  let cloud: TestCloud
  let port: number
  let user: Caller
  let backupId: string
  let s3Key: string
  let grantId: string
  /** Authorization header values that must never get past the guard, by name. */
  let attackers: Record<string, string | undefined>
  let validUserToken: string
  let privateRoutes: RouteEntry[]

  /** Attackers whose token is genuine, so the answer is 403 (not allowed) rather than 401 (not known). */
  const knownButRefused = new Set(['device token', 'not for the API'])

  /** A token like the server's, signed with `key` (the server's active key by default), claims overridden. */
  async function sign(claims: Record<string, unknown>, key?: Awaited<ReturnType<typeof exportJWK>>) {
    const active = defined((await cloud.app.services.tokens.keyRing.keys()).signing[0])
    const now = Math.floor(Date.now() / 1000)
    const payload = {
      iss: cloud.app.services.tokens.issuer,
      aud: cloud.app.services.tokens.audience,
      sub: user.id,
      type: 'user',
      scope: 'openid offline_access backups',
      iat: now,
      exp: now + 900,
      ...claims,
    }
    return new SignJWT(payload)
      .setProtectedHeader({ alg: 'ES256', kid: active.kid, typ: 'at+jwt' })
      .sign(await importJWK(key ?? active, 'ES256'))
  }

  /** What a signed-in request would change, if any attack got through. */
  async function snapshot() {
    const { db } = cloud.database
    const [users, backups, settings, owners, subscriptions, artifacts] = await Promise.all([
      db.selectFrom('users').selectAll().orderBy('id').execute(),
      db.selectFrom('backups').selectAll().orderBy('id').execute(),
      db.selectFrom('backup_settings').selectAll().orderBy('user_id').execute(),
      db.selectFrom('backend_owners').selectAll().orderBy('backend_id').execute(),
      db.selectFrom('subscriptions').selectAll().orderBy('id').execute(),
      db
        .selectFrom('oauth_payloads')
        .select(['model', (eb) => eb.fn.countAll<string>().as('count')])
        .groupBy('model')
        .orderBy('model')
        .execute(),
    ])
    const object = await cloud.app.services.backups.store.head(s3Key)
    return { users, backups, settings, owners, subscriptions, artifacts, object }
  }

  /** The concrete path of a route, naming the real backup and session so that an attack has a target. */
  function targetPath(url: string): string {
    return samplePath(
      url,
      url.includes(':backupId') ? backupId : url.includes(':id') ? sessionIdOf(grantId) : 'probe-1',
    )
  }

  /** A body the route would act on if the caller were let in. */
  function bodyFor(route: RouteEntry): string | undefined {
    if (route.method !== 'POST' && route.method !== 'PUT' && route.method !== 'PATCH') {
      return undefined
    }
    const bodies: Record<string, object> = {
      '/cloud-backups/settings': { enabled: false, retentionDays: 7 },
      '/cloud-backups/request-upload': {
        filename: 'attack.zip',
        backendId: 'backend-attack',
        uncompressedSize: 10,
        compressedSize: 10,
        sha256: 'ab'.repeat(32),
      },
      '/cloud-backups/complete-upload': { backupId, actualCompressedSize: 1 },
    }
    return JSON.stringify(bodies[route.url] ?? {})
  }

  beforeAll(async () => {
    cloud = await startTestCloud(kind, { env: { LOG_LEVEL: 'warn' } })
    port = Number(new URL(cloud.url).port)
    user = await newCaller(cloud)
    validUserToken = user.token

    // State worth attacking: saved settings, a completed backup with its file, a session.
    expect((await user.call('POST', '/cloud-backups/settings', { enabled: true, retentionDays: 30 })).status).toBe(200)
    const file = randomBytes(4096)
    const grant = (await (
      await user.call('POST', '/cloud-backups/request-upload', {
        filename: 'kept.zip',
        backendId: 'backend-kept',
        uncompressedSize: file.length,
        compressedSize: file.length,
        sha256: createHash('sha256').update(file).digest('hex'),
      })
    ).json()) as UploadGrant
    expect((await putUpload(grant, file)).status).toBe(200)
    const completed = await user.call('POST', '/cloud-backups/complete-upload', {
      backupId: grant.backupId,
      actualCompressedSize: file.length,
    })
    expect(completed.status).toBe(200)
    backupId = grant.backupId
    s3Key = grant.s3Key
    const provider = await cloud.app.oauth.provider()
    grantId = await grantFirstParty(provider, user.id, relayClientId, cloud.app.oauth.audience)

    const device = await registerDeviceClient(cloud.database.db, 'Attacking gateway')
    const deviceConfig = await client.discovery(
      new URL(`${cloud.url}/oauth`),
      device.clientId,
      undefined,
      client.PrivateKeyJwt((await importJWK(device.privateKey, 'ES256')) as DeviceKey),
      { execute: [client.allowInsecureRequests] },
    )
    const deviceToken = (await client.clientCredentialsGrant(deviceConfig)).access_token

    const stranger = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey)
    const longAgo = Math.floor(Date.now() / 1000) - 3600
    attackers = {
      'no token': undefined,
      'forged token': `Bearer ${await sign({}, stranger)}`,
      'expired token': `Bearer ${await sign({ iat: longAgo, exp: longAgo + 900 })}`,
      'wrong audience': `Bearer ${await sign({ aud: 'https://other-api.example' })}`,
      'not for the API': `Bearer ${await sign({ scope: 'openid email profile' })}`,
      'device token': `Bearer ${deviceToken}`,
    }
    // Built the same way but unchanged, a token is let in: each refusal below is for its one flaw.
    const baseline = await rawRequest(port, {
      method: 'GET',
      path: '/auth/user-info',
      headers: { authorization: `Bearer ${await sign({})}` },
    })
    expect(baseline.status).toBe(200)

    privateRoutes = routeTable(cloud.app).filter((route) => route.config.public !== true)
  })

  afterAll(async () => {
    await cloud?.close()
  })

  it('covers the whole API: account and backup routes are private, sign-in and the store are not', () => {
    const urls = new Set(privateRoutes.map((route) => route.url))
    expect(urls).toEqual(
      new Set([
        '/auth/user-info',
        '/auth/sessions',
        '/auth/sessions/:id',
        '/auth/logout',
        '/cloud-backups/status',
        '/cloud-backups/settings',
        '/cloud-backups/request-upload',
        '/cloud-backups/complete-upload',
        '/cloud-backups/list',
        '/cloud-backups/:backupId/request-download',
        '/cloud-backups/:backupId',
      ]),
    )
  })

  it('refuses every form of every private path without a valid user token, whatever the Host', async () => {
    const before = await snapshot()
    type Attack = { route: RouteEntry; form: string; path: string; attacker: string; host: string }
    const attacks: Attack[] = privateRoutes.flatMap((route) =>
      Object.entries(pathForms(targetPath(route.url))).flatMap(([form, path]) =>
        Object.keys(attackers).flatMap((attacker) =>
          Object.keys(hostVariants).map((host) => ({ route, form, path, attacker, host })),
        ),
      ),
    )
    const outcomes = new Map<string, RawResponse>()
    const failures: string[] = []

    await inPool(attacks, async ({ route, form, path, attacker, host }) => {
      const authorization = attackers[attacker]
      const headers = { ...hostVariants[host], ...(authorization ? { authorization } : {}) }
      const res = await rawRequest(port, { method: route.method, path, headers, body: bodyFor(route) })
      outcomes.set(`${route.method} ${path} ${attacker} ${host}`, res)
      const label = `${route.method} ${path} (${form}) with ${attacker}, ${host}: ${res.status} ${res.body.slice(0, 120)}`
      if (![401, 403, 404].includes(res.status)) {
        failures.push(label)
        return
      }
      const json = String(res.headers['content-type'] ?? '').startsWith('application/json')
      if (route.method !== 'HEAD' && (!json || !isErrorBody(res.body))) {
        failures.push(`${label} (not an error body)`)
      }
      if (res.status === 403 && !knownButRefused.has(attacker)) {
        failures.push(`${label} (only a device token and a token for other scopes are known and refused)`)
      }
    })

    expect(failures).toEqual([])
    // The Host changes no answer: the guard never reads it.
    for (const { route, path, attacker } of attacks) {
      const own = outcomes.get(`${route.method} ${path} ${attacker} own host`)
      const foreign = outcomes.get(`${route.method} ${path} ${attacker} foreign host`)
      expect(foreign?.status, `${route.method} ${path} with ${attacker}`).toBe(own?.status)
    }
    // Forms the router still matches meet the guard, not a 404: the attack reached what it aimed at.
    const plain = attacks.filter((attack) => attack.form === 'plain' && attack.host === 'own host')
    for (const { route, path, attacker } of plain) {
      const expected = knownButRefused.has(attacker) ? 403 : 401
      expect(outcomes.get(`${route.method} ${path} ${attacker} own host`)?.status, `${route.method} ${path}`).toBe(
        expected,
      )
    }
    expect(await snapshot()).toEqual(before)
  })

  it('lets a valid user token through on the plain path of every private route', async () => {
    // The other side of the attack: the same requests are answered by the route once signed in.
    for (const route of privateRoutes) {
      const path = samplePath(route.url, route.url.includes(':backupId') ? crypto.randomUUID() : 'probe-1')
      const res = await rawRequest(port, {
        method: route.method,
        path,
        headers: { authorization: `Bearer ${validUserToken}` },
        body: bodyFor(route) === undefined ? undefined : '{}',
      })
      expect([401, 403], `${route.method} ${path}: ${res.body}`).not.toContain(res.status)
      expect(res.body, `${route.method} ${path}`).not.toMatch(/Route .* not found/)
    }
  })
})

function isErrorBody(text: string): boolean {
  try {
    const body = JSON.parse(text) as Record<string, unknown>
    return (
      body.success === false &&
      typeof body.error === 'string' &&
      typeof body.code === 'string' &&
      Object.keys(body).every((key) => ['success', 'error', 'code', 'details'].includes(key))
    )
  } catch {
    return false
  }
}
