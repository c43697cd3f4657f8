import { relayClientId, relayScope } from '@relay/contracts'
import { createHttpBrowser, defined, rawRequest, submitForm } from '@relay/testkit'
import { decodeJwt, decodeProtectedHeader, importJWK } from 'jose'
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { databaseKinds } from '../../test/database.js'
import { sessionIdOf } from '../auth/service.js'
import { registerDeviceClient } from './clients.js'

type DeviceKey = Parameters<typeof client.PrivateKeyJwt>[0]

const callback = 'http://127.0.0.1:53682/api/unified-auth/cloud/callback'
const password = 'correct horse battery staple'

describe.each(databaseKinds)('authorization server on %s', (kind) => {
  let cloud: TestCloud
  let userId: string
  let relay: client.Configuration

  beforeAll(async () => {
    cloud = await startTestCloud(kind)
    userId = await cloud.addUser('ada@example.com', password, 'Ada')
    relay = await client.discovery(new URL(`${cloud.url}/oauth`), relayClientId, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    })
  })

  afterAll(async () => {
    await cloud?.close()
  })

  /** Starts an authorization request the way a relay does; returns what the relay keeps. */
  async function authorize(redirectUri = callback, extra: Record<string, string> = {}) {
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(relay, {
      redirect_uri: redirectUri,
      scope: relayScope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...extra,
    })
    return { url, verifier, state }
  }

  /** Signs in on the cloud's page and returns the relay callback URL the browser is sent to. */
  async function signIn(browser = createHttpBrowser(), request?: Awaited<ReturnType<typeof authorize>>) {
    const { url, verifier, state } = request ?? (await authorize())
    const atPage = await browser.follow(url)
    expect(atPage.response.status).toBe(200)
    expect(atPage.url.pathname).toMatch(/^\/interaction\//)
    const page = await atPage.response.text()
    expect(page).toContain('Sign in to Relay Cloud')
    const login = await submitForm(browser, new URL(`${atPage.url.pathname}/login`, cloud.url), {
      email: 'ADA@example.com',
      password,
    })
    expect(login.status).toBe(303)
    const done = await browser.follow(
      new URL(defined(login.headers.get('location')), cloud.url),
      (next) => next.origin === cloud.url,
    )
    expect(done.url.origin).not.toBe(cloud.url)
    return { callbackUrl: done.url, verifier, state, browser }
  }

  async function tokensFor(signedIn: Awaited<ReturnType<typeof signIn>>) {
    return client.authorizationCodeGrant(relay, signedIn.callbackUrl, {
      pkceCodeVerifier: signedIn.verifier,
      expectedState: signedIn.state,
    })
  }

  const userInfo = (token: string) =>
    cloud.app.inject({ method: 'GET', url: '/auth/user-info', headers: { authorization: `Bearer ${token}` } })

  it('runs the code flow with PKCE, then refreshes with rotation', async () => {
    const tokens = await tokensFor(await signIn())
    expect(tokens.token_type.toLowerCase()).toBe('bearer')
    expect(tokens.expires_in).toBe(900)
    expect(tokens.refresh_token).toEqual(expect.any(String))

    const header = decodeProtectedHeader(tokens.access_token)
    const claims = decodeJwt(tokens.access_token)
    expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) })
    expect(claims).toMatchObject({
      iss: `${cloud.url}/oauth`,
      aud: cloud.url,
      sub: userId,
      type: 'user',
      sid: expect.any(String),
    })
    expect(defined(claims.exp) - defined(claims.iat)).toBe(900)
    expect(decodeJwt(defined(tokens.id_token)).sub).toBe(userId)

    const me = await userInfo(tokens.access_token)
    expect(me.statusCode).toBe(200)
    expect(me.json()).toEqual({
      userId,
      email: 'ada@example.com',
      name: 'Ada',
      hasValidLicense: false,
      licenseSource: null,
    })

    const refreshed = await client.refreshTokenGrant(relay, defined(tokens.refresh_token))
    expect(refreshed.refresh_token).toEqual(expect.any(String))
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    expect(decodeJwt(refreshed.access_token)).toMatchObject({ sub: userId, sid: claims.sid })
    expect((await userInfo(refreshed.access_token)).statusCode).toBe(200)

    const again = await client.refreshTokenGrant(relay, defined(refreshed.refresh_token))
    expect(again.refresh_token).not.toBe(refreshed.refresh_token)
  })

  it('revokes the whole grant when a rotated refresh token is used again', async () => {
    const tokens = await tokensFor(await signIn())
    const sid = decodeJwt(tokens.access_token).sid
    const rotated = await client.refreshTokenGrant(relay, defined(tokens.refresh_token))

    await expect(client.refreshTokenGrant(relay, defined(tokens.refresh_token))).rejects.toMatchObject({
      error: 'invalid_grant',
    })
    // The thief's replay also ended the legitimate holder's chain.
    await expect(client.refreshTokenGrant(relay, defined(rotated.refresh_token))).rejects.toMatchObject({
      error: 'invalid_grant',
    })
    const sessions = await cloud.app.inject({
      method: 'GET',
      url: '/auth/sessions',
      headers: { authorization: `Bearer ${rotated.access_token}` },
    })
    expect(sessions.json().sessions.map((s: { id: string }) => s.id)).not.toContain(sessionIdOf(String(sid)))
  })

  it('gives every sign-in its own session, listed and revocable one by one', async () => {
    const browser = createHttpBrowser()
    const first = await tokensFor(await signIn(browser))
    // The same browser is still signed in at the cloud: no password asked, but a new grant.
    const request = await authorize()
    const done = await browser.follow(request.url, (next) => next.origin === cloud.url)
    expect(done.url.origin).toBe(new URL(callback).origin)
    const second = await client.authorizationCodeGrant(relay, done.url, {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
    })
    // Sessions are listed under the stored (hashed) id of the grant the token's `sid` names.
    const [firstSid, secondSid] = [first, second].map((t) => sessionIdOf(String(decodeJwt(t.access_token).sid)))
    expect(firstSid).not.toBe(secondSid)

    const auth = { authorization: `Bearer ${second.access_token}` }
    const listed = await cloud.app.inject({ method: 'GET', url: '/auth/sessions', headers: auth })
    expect(listed.statusCode).toBe(200)
    const sessions = listed.json().sessions as { id: string; clientId: string; current: boolean }[]
    expect(sessions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: firstSid, clientId: relayClientId, current: false }),
        expect.objectContaining({ id: secondSid, clientId: relayClientId, current: true }),
      ]),
    )

    const removed = await cloud.app.inject({ method: 'DELETE', url: `/auth/sessions/${firstSid}`, headers: auth })
    expect(removed.json()).toEqual({ success: true })
    await expect(client.refreshTokenGrant(relay, defined(first.refresh_token))).rejects.toMatchObject({
      error: 'invalid_grant',
    })
    const unknown = await cloud.app.inject({ method: 'DELETE', url: `/auth/sessions/${firstSid}`, headers: auth })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toMatchObject({ success: false, code: 'NOT_FOUND' })

    const logout = await cloud.app.inject({ method: 'POST', url: '/auth/logout', headers: auth })
    expect(logout.json()).toEqual({ success: true })
    await expect(client.refreshTokenGrant(relay, defined(second.refresh_token))).rejects.toMatchObject({
      error: 'invalid_grant',
    })
  })

  it('ends a session through the standard revocation endpoint too', async () => {
    const tokens = await tokensFor(await signIn())
    await client.tokenRevocation(relay, defined(tokens.refresh_token), { token_type_hint: 'refresh_token' })
    await expect(client.refreshTokenGrant(relay, defined(tokens.refresh_token))).rejects.toMatchObject({
      error: 'invalid_grant',
    })
  })

  it('accepts a loopback redirect on any port, and refuses any other redirect', async () => {
    const otherPort = 'http://127.0.0.1:9/api/unified-auth/cloud/callback'
    const signedIn = await signIn(createHttpBrowser(), await authorize(otherPort))
    expect(signedIn.callbackUrl.port).toBe('9')

    for (const redirect of [
      'http://evil.example/api/unified-auth/cloud/callback',
      'http://127.0.0.1:53682/elsewhere',
      'https://127.0.0.1:53682/api/unified-auth/cloud/callback',
    ]) {
      const { url } = await authorize(redirect)
      const response = await createHttpBrowser().request(url)
      expect(response.status).toBe(400)
      expect(response.headers.get('location')).toBeNull()
      expect(await response.text()).toContain('redirect_uri')
    }
  })

  it('refuses an authorization request without PKCE, or with the plain method', async () => {
    const withoutPkce = client.buildAuthorizationUrl(relay, { redirect_uri: callback, scope: relayScope, state: 'x' })
    const refused = await createHttpBrowser().request(withoutPkce)
    const location = new URL(defined(refused.headers.get('location')))
    expect(location.origin + location.pathname).toBe(callback)
    expect(location.searchParams.get('error')).toBe('invalid_request')
    expect(location.searchParams.get('error_description')).toMatch(/PKCE/)

    const plain = client.buildAuthorizationUrl(relay, {
      redirect_uri: callback,
      scope: relayScope,
      state: 'x',
      code_challenge: client.randomPKCECodeVerifier(),
      code_challenge_method: 'plain',
    })
    const plainRefused = new URL(defined((await createHttpBrowser().request(plain)).headers.get('location')))
    expect(plainRefused.searchParams.get('error')).toBe('invalid_request')
  })

  it('refuses a code exchange with a missing or wrong verifier', async () => {
    const signedIn = await signIn()
    const code = defined(signedIn.callbackUrl.searchParams.get('code'))
    const exchange = (verifier?: string) =>
      fetch(`${cloud.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: relayClientId,
          code,
          redirect_uri: callback,
          ...(verifier ? { code_verifier: verifier } : {}),
        }),
      })
    const missing = await exchange()
    expect(missing.status).toBe(400)
    expect(await missing.json()).toMatchObject({ error: 'invalid_grant' })
    const wrong = await exchange(client.randomPKCECodeVerifier())
    expect(wrong.status).toBe(400)
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' })
  })

  it('issues device tokens through client credentials, refused on user endpoints', async () => {
    const device = await registerDeviceClient(cloud.database.db, 'Sensor gateway')
    const config = await client.discovery(
      new URL(`${cloud.url}/oauth`),
      device.clientId,
      undefined,
      client.PrivateKeyJwt((await importJWK(device.privateKey, 'ES256')) as DeviceKey),
      { execute: [client.allowInsecureRequests] },
    )
    const tokens = await client.clientCredentialsGrant(config)
    expect(tokens.refresh_token).toBeUndefined()
    expect(decodeProtectedHeader(tokens.access_token).typ).toBe('at+jwt')
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: device.clientId, type: 'device', aud: cloud.url })

    const me = await userInfo(tokens.access_token)
    expect(me.statusCode).toBe(403)
    expect(me.json()).toEqual({
      success: false,
      code: 'DEVICE_TOKEN_FORBIDDEN',
      error: 'Device tokens are not permitted for this endpoint',
    })
  })

  it('refuses a device that signs with a key it was not registered with', async () => {
    const device = await registerDeviceClient(cloud.database.db, 'Gateway')
    const impostor = await registerDeviceClient(cloud.database.db, 'Other')
    const config = await client.discovery(
      new URL(`${cloud.url}/oauth`),
      device.clientId,
      undefined,
      client.PrivateKeyJwt((await importJWK(impostor.privateKey, 'ES256')) as DeviceKey),
      { execute: [client.allowInsecureRequests] },
    )
    await expect(client.clientCredentialsGrant(config)).rejects.toMatchObject({ error: 'invalid_client' })
  })

  it('shows clear errors on the sign-in page and throttles guessing', async () => {
    const browser = createHttpBrowser()
    const { url } = await authorize()
    const atPage = await browser.follow(url)
    const action = new URL(`${atPage.url.pathname}/login`, cloud.url)

    const empty = await submitForm(browser, action, { email: '', password: '' })
    expect(empty.status).toBe(400)
    expect(await empty.text()).toContain('Enter your email and password.')

    const email = 'nobody-guessing@example.com'
    for (let attempt = 0; attempt < 5; attempt++) {
      const wrong = await submitForm(browser, action, { email, password: `guess-${attempt}` })
      expect(wrong.status).toBe(401)
      const text = await wrong.text()
      expect(text).toContain('The email or password is not correct.')
      expect(text).toContain(`value="${email}"`)
    }
    const throttled = await submitForm(browser, action, { email, password: 'guess-6' })
    expect(throttled.status).toBe(429)
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await throttled.text()).toMatch(/Too many sign-in attempts\. Try again in \d+ minutes?\./)

    const gone = await createHttpBrowser().request(new URL('/interaction/no-such-uid', cloud.url))
    expect(gone.status).toBe(400)
    expect(await gone.text()).toContain('This sign-in has expired')
  })

  it('escapes what it echoes on the sign-in page', async () => {
    const browser = createHttpBrowser()
    const atPage = await browser.follow((await authorize()).url)
    const response = await submitForm(browser, new URL(`${atPage.url.pathname}/login`, cloud.url), {
      email: '"><script>alert(1)</script>',
      password: 'x',
    })
    const text = await response.text()
    expect(text).not.toContain('<script>alert(1)</script>')
    expect(text).toContain('&quot;&gt;&lt;script&gt;')
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'")
  })

  it('lets the user cancel, and the relay hears access_denied', async () => {
    const browser = createHttpBrowser()
    const atPage = await browser.follow((await authorize()).url)
    const cancel = await submitForm(browser, new URL(`${atPage.url.pathname}/abort`, cloud.url), {})
    const done = await browser.follow(
      new URL(defined(cancel.headers.get('location')), cloud.url),
      (next) => next.origin === cloud.url,
    )
    expect(done.url.searchParams.get('error')).toBe('access_denied')
  })

  it('names itself and every endpoint on its public URL, whatever Host the request names', async () => {
    const port = Number(new URL(cloud.url).port)
    const discovery = '/oauth/.well-known/openid-configuration'
    const spoofs: Record<string, string>[] = [
      {},
      { host: 'evil.example' },
      { host: 'evil.example:8443', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
      { 'x-forwarded-host': 'evil.example', forwarded: 'host=evil.example;proto=https' },
    ]
    for (const headers of spoofs) {
      const res = await rawRequest(port, { method: 'GET', path: discovery, headers })
      expect(res.status, JSON.stringify(headers)).toBe(200)
      const metadata = JSON.parse(res.body) as Record<string, unknown>
      expect(metadata.issuer).toBe(`${cloud.url}/oauth`)
      const urls = Object.entries(metadata).filter(([, value]) => typeof value === 'string' && /^\w+:\/\//.test(value))
      expect(urls.map(([name]) => name)).toEqual(
        expect.arrayContaining(['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint']),
      )
      for (const [name, value] of urls) {
        expect(value, `${name} with ${JSON.stringify(headers)}`).toMatch(new RegExp(`^${cloud.url}/oauth($|/)`))
      }
      expect(res.body).not.toContain('evil.example')
    }
    // A request line with an absolute URL names another host the old way: still not ours to follow.
    const absolute = await rawRequest(port, { method: 'GET', path: `http://evil.example${discovery}` })
    expect(absolute.status).toBe(200)
    expect(absolute.body).not.toContain('evil.example')
  })

  it('never writes a token, code or password to its log', async () => {
    const signedIn = await signIn()
    const tokens = await tokensFor(signedIn)
    const refreshed = await client.refreshTokenGrant(relay, defined(tokens.refresh_token))
    await userInfo(refreshed.access_token)
    const log = cloud.logs.join('')
    expect(log.length).toBeGreaterThan(1000)
    const secrets = [
      tokens.access_token,
      defined(tokens.refresh_token),
      defined(tokens.id_token),
      refreshed.access_token,
      defined(refreshed.refresh_token),
      defined(signedIn.callbackUrl.searchParams.get('code')),
      signedIn.verifier,
      password,
    ]
    for (const secret of secrets) {
      expect(log).not.toContain(secret)
    }
  })
})
