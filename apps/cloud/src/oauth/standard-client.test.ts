import { createServer, type Server } from 'node:http'
import { relayClientId } from '@relay/contracts'
import {
  checkPageEverywhere,
  chromiumProblem,
  defined,
  freePort,
  launchChromium,
  rawRequest,
  requirement,
} from '@relay/testkit'
import { importJWK } from 'jose'
import * as oauth from 'oauth4webapi'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { registerDeviceClient } from './clients.js'

/**
 * The authorization server as an independent OpenID Connect client library sees it: oauth4webapi,
 * not the library the relay uses, with a real browser on the sign-in page and a loopback server
 * catching the redirects, as a native client would.
 */

const chromium = requirement('Chromium', chromiumProblem())
const password = 'correct horse battery staple'
/** What a standard client asks for: the relay's scopes and the profile claims. */
const requestedScope = 'openid email profile offline_access backups'
const insecure = { [oauth.allowInsecureRequests]: true }
const client: oauth.Client = { client_id: relayClientId }
const clientAuth = oauth.None()

describe.skipIf(!chromium.available)('a standard OpenID Connect client (oauth4webapi) in Chromium', () => {
  let cloud: TestCloud
  let browser: Browser
  let context: BrowserContext | undefined
  let loopback: Server
  let loopbackUrl: string
  let userId: string
  let issuer: URL
  let as: oauth.AuthorizationServer

  beforeAll(async () => {
    cloud = await startTestCloud('pglite')
    userId = await cloud.addUser('ada@example.com', password, 'Ada Lovelace')
    browser = await launchChromium()
    const port = await freePort()
    loopback = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<!doctype html><title>Back at the client</title><p>Back at the client.</p>')
    })
    await new Promise<void>((resolve) => loopback.listen(port, '127.0.0.1', resolve))
    loopbackUrl = `http://127.0.0.1:${port}`
    issuer = new URL(`${cloud.url}/oauth`)
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure))
  })

  afterEach(async () => {
    await context?.close()
    context = undefined
  })

  afterAll(async () => {
    await browser?.close()
    await new Promise((resolve) => loopback?.close(resolve))
    await cloud?.close()
  })

  const callback = () => `${loopbackUrl}/api/unified-auth/cloud/callback`

  /** A browser page of its own: one test's cloud sign-in never signs another in. */
  async function openPage(options: { bypassCSP?: boolean } = {}): Promise<Page> {
    context = await browser.newContext(options)
    return context.newPage()
  }

  /** Sends the browser to the authorization endpoint; returns what the client keeps meanwhile. */
  async function startAuthorization(page: Page, extra: Record<string, string> = {}) {
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const nonce = oauth.generateRandomNonce()
    const url = new URL(defined(as.authorization_endpoint))
    url.search = new URLSearchParams({
      client_id: relayClientId,
      redirect_uri: callback(),
      response_type: 'code',
      scope: requestedScope,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...extra,
    }).toString()
    await page.goto(url.href)
    return { verifier, state, nonce }
  }

  const atCallback = (url: URL) => url.href.startsWith(callback())
  const atSignInPage = (url: URL) => url.origin === cloud.url && url.pathname.startsWith('/interaction/')

  async function signInOnPage(page: Page) {
    await page.waitForURL(atSignInPage)
    await page.getByLabel('Email').fill('ada@example.com')
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(atCallback)
  }

  /** The code on the page's address, exchanged as the library does it. */
  async function exchange(page: Page, started: Awaited<ReturnType<typeof startAuthorization>>) {
    const params = oauth.validateAuthResponse(as, client, new URL(page.url()), started.state)
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      callback(),
      started.verifier,
      insecure,
    )
    return oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: started.nonce,
      requireIdToken: true,
    })
  }

  async function signIn(page: Page) {
    const started = await startAuthorization(page)
    await signInOnPage(page)
    return exchange(page, started)
  }

  async function refresh(refreshToken: string, scope?: string) {
    const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshToken, {
      ...insecure,
      ...(scope ? { additionalParameters: { scope } } : {}),
    })
    return oauth.processRefreshTokenResponse(as, client, response)
  }

  async function userInfo(accessToken: string) {
    const response = await oauth.userInfoRequest(as, client, accessToken, insecure)
    return oauth.processUserInfoResponse(as, client, userId, response)
  }

  async function revoke(refreshToken: string) {
    const response = await oauth.revocationRequest(as, client, clientAuth, refreshToken, {
      ...insecure,
      additionalParameters: { token_type_hint: 'refresh_token' },
    })
    await oauth.processRevocationResponse(response)
  }

  /** A device client authenticates with its key (private_key_jwt). */
  async function deviceAuth(device: Awaited<ReturnType<typeof registerDeviceClient>>) {
    return oauth.PrivateKeyJwt(
      (await importJWK(device.privateKey, 'ES256')) as Parameters<typeof oauth.PrivateKeyJwt>[0],
    )
  }

  const scopesOf = (scope: string | undefined) => new Set(defined(scope, 'scope').split(' '))

  /** Where a new authorization request without a prompt takes the browser: back to the client, or to the sign-in page. */
  async function silentSignIn(page: Page): Promise<'signed-in' | 'asked-for-password'> {
    await startAuthorization(page)
    await page.waitForURL((url) => atCallback(url) || atSignInPage(url))
    return atCallback(new URL(page.url())) ? 'signed-in' : 'asked-for-password'
  }

  it('publishes one metadata document through OpenID discovery and RFC 8414, with the API scope', async () => {
    const rfc8414 = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }),
    )
    expect(rfc8414).toEqual(as)
    // RFC 8414 §3 inserts the issuer's path after the well-known name; the plain name answers the same.
    const plain = await fetch(`${cloud.url}/.well-known/oauth-authorization-server`)
    expect(plain.status).toBe(200)
    expect(await plain.json()).toEqual(as)
    const head = await fetch(`${cloud.url}/.well-known/oauth-authorization-server/oauth`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toMatch(/^application\/json/)

    expect(as).toMatchObject({
      issuer: issuer.href,
      authorization_endpoint: `${issuer.href}/auth`,
      token_endpoint: `${issuer.href}/token`,
      userinfo_endpoint: `${issuer.href}/me`,
      revocation_endpoint: `${issuer.href}/token/revocation`,
      end_session_endpoint: `${issuer.href}/session/end`,
      code_challenge_methods_supported: ['S256'],
    })
    expect(as.scopes_supported).toEqual(
      expect.arrayContaining(['openid', 'offline_access', 'email', 'profile', 'backups']),
    )

    // Built on the configured public origin, whatever Host the request names.
    const port = Number(new URL(cloud.url).port)
    for (const path of ['/.well-known/oauth-authorization-server/oauth', '/.well-known/oauth-authorization-server']) {
      const spoofed = await rawRequest(port, { method: 'GET', path, headers: { host: 'evil.example' } })
      expect(spoofed.status, path).toBe(200)
      expect(spoofed.body).not.toContain('evil.example')
      expect(JSON.parse(spoofed.body)).toEqual(as)
    }
  })

  it('answers other addresses under the metadata name and other methods with 404', async () => {
    for (const [method, path] of [
      ['GET', '/.well-known/oauth-authorization-server/other'],
      ['GET', '/.well-known/oauth-authorization-server/oauth/extra'],
      ['POST', '/.well-known/oauth-authorization-server/oauth'],
      ['DELETE', '/.well-known/oauth-authorization-server'],
    ] as const) {
      const response = await fetch(`${cloud.url}${path}`, { method })
      expect(response.status, `${method} ${path}`).toBe(404)
    }
  })

  it('signs in with the code flow and PKCE, then runs userinfo, refresh, end-session and revocation', async () => {
    const page = await openPage()
    const tokens = await signIn(page)
    // Every granted scope is reported, offline_access included, and a refresh token comes with it.
    expect(scopesOf(tokens.scope)).toEqual(scopesOf(requestedScope))
    expect(tokens.refresh_token).toEqual(expect.any(String))
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ sub: userId, aud: relayClientId })

    // The access token is an RFC 9068 JWT for the cloud API, which the API itself accepts.
    const apiRequest = new Request(`${cloud.url}/auth/user-info`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    const claims = await oauth.validateJwtAccessToken(as, apiRequest, cloud.url, insecure)
    expect(claims).toMatchObject({ sub: userId, client_id: relayClientId, type: 'user' })
    expect(scopesOf(claims.scope)).toEqual(scopesOf(requestedScope))
    expect((await fetch(apiRequest)).status).toBe(200)

    // The same token at the UserInfo endpoint, with the claims of the granted scopes.
    expect(await userInfo(tokens.access_token)).toEqual({
      sub: userId,
      email: 'ada@example.com',
      email_verified: true,
      name: 'Ada Lovelace',
    })

    // A refresh that resends the original scope, as standard clients do, then one asking for less.
    const refreshed = await refresh(defined(tokens.refresh_token), requestedScope)
    expect(scopesOf(refreshed.scope)).toEqual(scopesOf(requestedScope))
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    expect(await userInfo(refreshed.access_token)).toMatchObject({ sub: userId })
    const narrower = await refresh(defined(refreshed.refresh_token), 'openid backups')
    expect(scopesOf(narrower.scope)).toEqual(new Set(['openid', 'backups']))
    expect(await userInfo(narrower.access_token)).toEqual({ sub: userId })

    // The browser is still signed in at the cloud: a new request needs no password.
    expect(await silentSignIn(page)).toBe('signed-in')

    // RP-initiated logout: the cloud asks, the user signs out, the browser comes back with the state.
    const endSession = new URL(defined(as.end_session_endpoint))
    endSession.search = new URLSearchParams({
      client_id: relayClientId,
      post_logout_redirect_uri: `${loopbackUrl}/settings/account`,
      state: 'after-sign-out',
    }).toString()
    const question = await page.goto(endSession.href)
    expect(question?.headers()['content-security-policy']).toContain("default-src 'none'")
    expect(await page.getByRole('heading').textContent()).toBe('Sign out of Relay Cloud?')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL((url) => url.href.startsWith(`${loopbackUrl}/settings/account`))
    expect(new URL(page.url()).searchParams.get('state')).toBe('after-sign-out')
    expect(await silentSignIn(page)).toBe('asked-for-password')

    // Offline access outlives the browser's sign-in; revoking the refresh token ends it, and every token with it.
    const later = await refresh(defined(narrower.refresh_token))
    await revoke(defined(later.refresh_token))
    await expect(refresh(defined(later.refresh_token))).rejects.toMatchObject({ error: 'invalid_grant' })
    await expect(userInfo(later.access_token)).rejects.toMatchObject({
      status: 401,
      cause: [expect.objectContaining({ parameters: expect.objectContaining({ error: 'invalid_token' }) })],
    })
  })

  it('ends the browser sign-in that made the grant when the client revokes its refresh token', async () => {
    const page = await openPage()
    const tokens = await signIn(page)
    await revoke(defined(tokens.refresh_token))
    expect(await silentSignIn(page)).toBe('asked-for-password')
  })

  it("keeps the browser sign-in when a revocation names another client's token", async () => {
    const page = await openPage()
    const tokens = await signIn(page)
    const device = await registerDeviceClient(cloud.database.db, 'Gateway')
    const deviceClient: oauth.Client = { client_id: device.clientId }
    const response = await oauth.revocationRequest(
      as,
      deviceClient,
      await deviceAuth(device),
      defined(tokens.refresh_token),
      insecure,
    )
    await oauth.processRevocationResponse(response)
    expect(await silentSignIn(page)).toBe('signed-in')
    expect((await refresh(defined(tokens.refresh_token))).access_token).toEqual(expect.any(String))
  })

  it('refuses requests at the UserInfo endpoint it cannot answer, with RFC 6750 challenges', async () => {
    const page = await openPage()
    const tokens = await signIn(page)
    const me = defined(as.userinfo_endpoint)
    const ask = (headers: Record<string, string> = {}, url = me, method = 'GET') => fetch(url, { method, headers })
    const challenge = (response: Response) => response.headers.get('www-authenticate') ?? ''

    const missing = await ask()
    expect(missing.status).toBe(401)
    expect(challenge(missing)).toBe(`Bearer realm="${issuer.href}"`)
    expect(await missing.json()).toMatchObject({ error: 'invalid_token' })

    for (const authorization of [
      'Bearer not-a-token',
      'Bearer a.b.c',
      `Bearer ${tokens.access_token.slice(0, -4)}AAAA`,
      `Basic ${tokens.access_token}`,
      `Bearer ${'x'.repeat(4000)}.${'y'.repeat(4000)}.z`,
    ]) {
      const refused = await ask({ authorization })
      expect(refused.status, authorization.slice(0, 20)).toBe(401)
      expect(await refused.json()).toMatchObject({ error: 'invalid_token' })
    }

    const inAddress = await ask({}, `${me}?access_token=${encodeURIComponent(tokens.access_token)}`)
    expect(inAddress.status).toBe(400)
    expect(await inAddress.json()).toMatchObject({ error: 'invalid_request' })

    // POST works as GET does (OpenID Connect Core §5.3.1).
    const posted = await ask({ authorization: `Bearer ${tokens.access_token}` }, me, 'POST')
    expect(posted.status).toBe(200)
    expect(await posted.json()).toMatchObject({ sub: userId })

    // A token without openid, and a device's token, carry no user claims.
    const apiOnly = await refresh(defined(tokens.refresh_token), 'backups')
    const device = await registerDeviceClient(cloud.database.db, 'Sensor')
    const deviceTokens = await oauth.processClientCredentialsResponse(
      as,
      { client_id: device.clientId },
      await oauth.clientCredentialsGrantRequest(
        as,
        { client_id: device.clientId },
        await deviceAuth(device),
        { scope: 'openid backups' },
        insecure,
      ),
    )
    for (const token of [apiOnly.access_token, deviceTokens.access_token]) {
      const refused = await ask({ authorization: `Bearer ${token}` })
      expect(refused.status).toBe(403)
      expect(challenge(refused)).toContain('error="insufficient_scope", scope="openid"')
      expect(await refused.json()).toMatchObject({ error: 'insufficient_scope' })
    }
  })

  it('refuses end-session requests it cannot follow, with a clear page', async () => {
    const endSession = defined(as.end_session_endpoint)
    const refused: Record<string, string>[] = [
      { client_id: relayClientId, post_logout_redirect_uri: 'https://evil.example/settings/account' },
      { client_id: relayClientId, post_logout_redirect_uri: `${loopbackUrl}/elsewhere` },
      { client_id: 'no-such-client' },
      { id_token_hint: 'not-a-token' },
    ]
    for (const params of refused) {
      const response = await fetch(`${endSession}?${new URLSearchParams(params)}`, {
        redirect: 'manual',
        headers: { accept: 'text/html' },
      })
      expect(response.status, JSON.stringify(params)).toBe(400)
      expect(response.headers.get('location')).toBeNull()
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'")
      expect(await response.text()).toContain('<h1>Sign-out failed</h1>')
    }
  })

  it('shows the sign-out pages well on a phone and a desktop, in light and dark', async () => {
    // axe is injected as a script, which the pages' policy forbids: this context lets it in.
    const page = await openPage({ bypassCSP: true })
    await signIn(page)
    await page.goto(defined(as.end_session_endpoint))
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    expect(await checkPageEverywhere(page)).toEqual([])
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor()
    expect(await checkPageEverywhere(page)).toEqual([])
  })
})
