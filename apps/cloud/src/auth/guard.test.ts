import { createTestClock, defined } from '@relay/testkit'
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testConfig } from '../../test/app.js'
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/database.js'
import { type CloudApp, createApp } from '../app.js'
import { retiredKeyLifetime } from '../oauth/keys.js'
import { mintAccessToken } from './tokens.js'

const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')

describe.each(databaseKinds)('access-token guard on %s', (kind) => {
  const clock = createTestClock('2026-03-01T10:00:00.000Z')
  let database: TestDatabase
  let app: CloudApp
  let userId: string

  /** What the probe routes below ran: a handler that runs when it should not is a breach. */
  const reached: string[] = []

  beforeAll(async () => {
    database = await createTestDatabase(kind)
    app = await createApp(testConfig(database.dataDir), { database, clock })
    // Routes added after the app is built, as a plugin of tomorrow would add them: the guard still applies.
    const probe = (name: string) => async (request: { principal: unknown }) => {
      reached.push(name)
      return { name, principal: request.principal }
    }
    app.get('/probe/private', probe('private'))
    app.get('/probe/public', { config: { public: true } }, probe('public'))
    app.get('/probe/relay-cloud-mode', { config: { public: 'cloud-mode' } }, probe('relay-cloud-mode'))
    app.get('/probe/devices', { config: { deviceTokens: true } }, probe('devices'))
    await app.register(async (scope) => {
      scope.get('/probe/nested', probe('nested'))
    })
    await app.ready()
    userId = (await app.services.directory.create({ email: 'grace@example.com', password: 'long enough password' })).id
  })

  afterAll(async () => {
    await app?.close()
    await database?.dispose()
  })

  const mint = (options: { type?: 'user' | 'device'; subject?: string } = {}) =>
    mintAccessToken(app.services.tokens, { subject: options.subject ?? userId, type: options.type ?? 'user' })

  const call = (authorization?: string) =>
    app.inject({ method: 'GET', url: '/auth/user-info', headers: authorization ? { authorization } : {} })

  async function activeKey() {
    return defined((await app.services.tokens.keyRing.keys()).signing[0])
  }

  /** A token like the server's, with `claims` and `header` overriding its fields (undefined removes one). */
  async function signWith(claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
    const { importJWK } = await import('jose')
    const key = await activeKey()
    const now = Math.floor(clock.now().getTime() / 1000)
    const payload = {
      iss: app.services.tokens.issuer,
      aud: app.services.tokens.audience,
      sub: userId,
      type: 'user',
      scope: 'openid offline_access backups',
      iat: now,
      exp: now + 900,
      ...claims,
    }
    return new SignJWT(JSON.parse(JSON.stringify(payload)))
      .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt', ...header } as never)
      .sign(await importJWK(key, 'ES256'))
  }

  it('lets a valid user token through and puts the user on the request', async () => {
    const { token } = await mint()
    const res = await call(`Bearer ${token}`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ userId, email: 'grace@example.com' })
  })

  it('answers 401 with a challenge when the token is missing or not a bearer JWT', async () => {
    for (const header of [undefined, 'Basic Z3JhY2U6cHc=', 'Bearer', 'Bearer not-a-jwt']) {
      const res = await call(header)
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="relay-cloud"/)
      expect(res.json()).toEqual({ success: false, code: 'UNAUTHORIZED', error: 'A bearer access token is required' })
    }
  })

  it('rejects an expired token', async () => {
    const { token, expiresAt } = await mint()
    clock.set(expiresAt)
    const res = await call(`Bearer ${token}`)
    clock.set('2026-03-01T10:00:00.000Z')
    expect(res.statusCode).toBe(401)
    expect(res.json()).toMatchObject({ code: 'UNAUTHORIZED', error: 'Access token has expired' })
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"')
  })

  it('rejects a token whose payload was changed after signing', async () => {
    const { token } = await mint()
    const [header, , signature] = token.split('.')
    const forged = `${header}.${encode({ ...decodeJwt(token), sub: '00000000-0000-4000-8000-000000000000' })}.${signature}`
    expect((await call(`Bearer ${forged}`)).statusCode).toBe(401)
  })

  it('rejects alg none', async () => {
    const { token } = await mint()
    const unsigned = `${encode({ alg: 'none', typ: 'at+jwt' })}.${token.split('.')[1]}.`
    const res = await call(`Bearer ${unsigned}`)
    expect(res.statusCode).toBe(401)
    expect(res.json().code).toBe('UNAUTHORIZED')
  })

  it('rejects HS256 signed with the public key as the secret', async () => {
    const { d: _private, ...publicKey } = await activeKey()
    const now = Math.floor(clock.now().getTime() / 1000)
    const confused = await new SignJWT({ type: 'user' })
      .setProtectedHeader({ alg: 'HS256', kid: publicKey.kid, typ: 'at+jwt' })
      .setIssuer(app.services.tokens.issuer)
      .setAudience(app.services.tokens.audience)
      .setSubject(userId)
      .setIssuedAt(now)
      .setExpirationTime(now + 900)
      .sign(new TextEncoder().encode(JSON.stringify(publicKey)))
    expect((await call(`Bearer ${confused}`)).statusCode).toBe(401)
  })

  it('rejects a token signed by a key it does not know, even under a known kid', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true })
    const stranger = await exportJWK(privateKey)
    const { importJWK } = await import('jose')
    const now = Math.floor(clock.now().getTime() / 1000)
    const token = await new SignJWT({ type: 'user' })
      .setProtectedHeader({ alg: 'ES256', kid: (await activeKey()).kid, typ: 'at+jwt' })
      .setIssuer(app.services.tokens.issuer)
      .setAudience(app.services.tokens.audience)
      .setSubject(userId)
      .setIssuedAt(now)
      .setExpirationTime(now + 900)
      .sign(await importJWK(stranger, 'ES256'))
    expect((await call(`Bearer ${token}`)).statusCode).toBe(401)
  })

  it('rejects the wrong audience, issuer or token type', async () => {
    const cases = [
      await signWith({ aud: 'https://other-api.example' }),
      await signWith({ iss: 'https://other-issuer.example' }),
      await signWith({}, { typ: 'JWT' }),
      await signWith({ type: 'admin' }),
      await signWith({ type: undefined }),
    ]
    for (const token of cases) {
      const res = await call(`Bearer ${token}`)
      expect(res.statusCode).toBe(401)
      expect(res.json().code).toBe('UNAUTHORIZED')
    }
    // The baseline built the same way passes, so each refusal above is the one changed claim.
    expect((await call(`Bearer ${await signWith({})}`)).statusCode).toBe(200)
  })

  it('answers a token not issued for the API scope with 403 and says which scope it needs', async () => {
    for (const scope of [undefined, 'openid', 'openid email profile', 'backupsx', 42]) {
      const res = await call(`Bearer ${await signWith({ scope })}`)
      expect(res.statusCode, String(scope)).toBe(403)
      expect(res.json()).toEqual({
        success: false,
        code: 'FORBIDDEN',
        error: 'This access token was not issued for the backups scope',
      })
      expect(res.headers['www-authenticate']).toBe(
        'Bearer realm="relay-cloud", error="insufficient_scope", scope="backups"',
      )
    }
  })

  it('answers a device token with 403 on a user-only route', async () => {
    const { token } = await mint({ type: 'device', subject: 'device-abc' })
    const res = await call(`Bearer ${token}`)
    expect(res.statusCode).toBe(403)
    expect(res.json()).toEqual({
      success: false,
      code: 'DEVICE_TOKEN_FORBIDDEN',
      error: 'Device tokens are not permitted for this endpoint',
    })
  })

  it('keeps every route private unless its definition says public, in any scope', async () => {
    reached.length = 0
    for (const url of ['/probe/private', '/probe/nested', '/probe/relay-cloud-mode', '/probe/devices']) {
      const res = await app.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(401)
      expect(res.json()).toEqual({ success: false, code: 'UNAUTHORIZED', error: 'A bearer access token is required' })
    }
    expect(reached).toEqual([])

    const open = await app.inject({ method: 'GET', url: '/probe/public' })
    expect(open.statusCode).toBe(200)
    expect(open.json()).toEqual({ name: 'public', principal: null })

    const { token } = await mint()
    const signedIn = await app.inject({
      method: 'GET',
      url: '/probe/nested',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(signedIn.statusCode).toBe(200)
    expect(signedIn.json().principal).toMatchObject({ id: userId, type: 'user' })
    expect(reached).toEqual(['public', 'nested'])
  })

  it('refuses device tokens on every private route but those that let devices in', async () => {
    reached.length = 0
    const { token } = await mint({ type: 'device', subject: 'device-abc' })
    const headers = { authorization: `Bearer ${token}` }
    for (const url of ['/probe/private', '/probe/nested', '/cloud-backups/status', '/auth/sessions']) {
      const res = await app.inject({ method: 'GET', url, headers })
      expect(res.statusCode, url).toBe(403)
      expect(res.json().code).toBe('DEVICE_TOKEN_FORBIDDEN')
    }
    const allowed = await app.inject({ method: 'GET', url: '/probe/devices', headers })
    expect(allowed.statusCode).toBe(200)
    expect(allowed.json().principal).toMatchObject({ id: 'device-abc', type: 'device' })
    expect(reached).toEqual(['devices'])
  })

  it('answers a route that does not exist with 404 whatever the token', async () => {
    const { token } = await mint()
    for (const headers of [{}, { authorization: `Bearer ${token}` }, { authorization: 'Bearer x.y.z' }]) {
      const res = await app.inject({ method: 'GET', url: '/probe/missing', headers })
      expect(res.statusCode).toBe(404)
      expect(res.json().code).toBe('NOT_FOUND')
    }
    // A real path with a method it does not have is no route either.
    expect((await app.inject({ method: 'PUT', url: '/probe/private' })).statusCode).toBe(404)
  })

  it('answers 401 when the account behind a valid token is gone', async () => {
    const { token } = await mint({ subject: '00000000-0000-4000-8000-000000000000' })
    const res = await call(`Bearer ${token}`)
    expect(res.statusCode).toBe(401)
  })

  it('keeps verifying tokens of a rotated-out key until it retires', async () => {
    const before = await mint()
    const oldKid = (await activeKey()).kid
    const { kid, retiring } = await app.services.tokens.keyRing.rotate()
    expect(retiring).toEqual([oldKid])
    const after = await mint()
    expect(JSON.parse(Buffer.from(defined(after.token.split('.')[0]), 'base64url').toString()).kid).toBe(kid)

    const jwks = await (await app.inject({ method: 'GET', url: '/oauth/jwks' })).json()
    expect(jwks.keys.map((key: { kid: string }) => key.kid)).toEqual([kid, oldKid])
    expect(jwks.keys.every((key: { d?: string }) => key.d === undefined)).toBe(true)
    expect((await call(`Bearer ${before.token}`)).statusCode).toBe(200)
    expect((await call(`Bearer ${after.token}`)).statusCode).toBe(200)

    clock.advance(retiredKeyLifetime + 1000)
    const keys = await app.services.tokens.keyRing.keys()
    clock.set('2026-03-01T10:00:00.000Z')
    expect(keys.public.map((key) => key.kid)).toEqual([kid])
  })
})
