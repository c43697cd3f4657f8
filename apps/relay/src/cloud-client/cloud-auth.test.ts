import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { sessionCookieName } from '@relay/contracts'
import {
  createHttpBrowser,
  createTestClock,
  defined,
  freePort,
  type HttpBrowser,
  submitForm,
  tempDir,
  waitFor,
} from '@relay/testkit'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { TestCloud } from '../../../cloud/test/cloud-server.js'
import {
  addCloudUser,
  cloudPassword,
  createShiftedClock,
  signInThroughCloud,
  startCloud,
  startLinkedRelay,
  storedRefreshToken,
} from '../../test/cloud.js'
import type { RelayApp } from '../app.js'

const cloudClock = createShiftedClock()
let cloud: TestCloud

beforeAll(async () => {
  cloud = await startCloud(cloudClock)
})

afterAll(async () => {
  await cloud?.close()
})

beforeEach(() => {
  cloudClock.offset = 0
})

/**
 * Starts a cloud sign-in from the relay and follows it as far as the cloud takes the browser on its
 * own: to its password form, or straight back to the relay's callback when it signs the browser in.
 */
async function startCloudSignIn(browser: HttpBrowser, relayUrl: string) {
  const start = await browser.request(`${relayUrl}/api/unified-auth/cloud/login`)
  expect(start.status).toBe(302)
  const authorizationUrl = new URL(defined(start.headers.get('location')))
  const reached = await browser.follow(authorizationUrl, (next) => next.origin === cloud.url)
  return { authorizationUrl, reached }
}

/** The cloud answered with its sign-in page (email and password), not with a redirect back. */
async function expectPasswordForm(reached: { response: Response; url: URL }) {
  expect(reached.url.origin).toBe(cloud.url)
  expect(reached.url.pathname).toMatch(/^\/interaction\//)
  expect(reached.response.status).toBe(200)
  const page = await reached.response.text()
  expect(page).toContain('Sign in to Relay Cloud')
  expect(page).toMatch(/<input id="email" name="email"/)
  expect(page).toMatch(/<input id="password" name="password" type="password"/)
}

/**
 * Signs in on the cloud's password form the browser is at; returns the relay's answer to the callback.
 * When the form signs in another account than the browser's cloud session holds, the cloud first ends
 * that session with a form its page submits by script: submitted here as a browser would.
 */
async function submitPasswordForm(browser: HttpBrowser, formUrl: URL, email: string) {
  const login = await submitForm(browser, new URL(`${formUrl.pathname}/login`, cloud.url), {
    email,
    password: cloudPassword,
  })
  expect(login.status).toBe(303)
  const staysAtCloud = (next: URL) => next.origin === cloud.url
  let back = await browser.follow(new URL(defined(login.headers.get('location')), cloud.url), staysAtCloud)
  if (back.url.origin === cloud.url) {
    const page = await back.response.text()
    const action = defined(page.match(/<form method="post" action="([^"]+)"/)?.[1])
    expect(new URL(action).pathname).toBe('/oauth/session/end/confirm')
    const fields = [...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)]
    const ended = await submitForm(browser, action, Object.fromEntries(fields.map(([, name, value]) => [name, value])))
    back = await browser.follow(new URL(defined(ended.headers.get('location')), cloud.url), staysAtCloud)
  }
  expect(back.url.pathname).toBe('/api/unified-auth/cloud/callback')
  return browser.request(back.url)
}

/**
 * The same authorization request without `prompt=login`: the browser's cloud session alone signs it
 * in, and the cloud sends it straight back to the relay with a code.
 */
async function expectSignedInSilentlyWithoutPrompt(browser: HttpBrowser, authorizationUrl: URL, relayUrl: string) {
  const withoutPrompt = new URL(authorizationUrl)
  withoutPrompt.searchParams.delete('prompt')
  const reached = await browser.follow(withoutPrompt, (next) => next.origin === cloud.url)
  expect(reached.url.origin).toBe(relayUrl)
  expect(reached.url.pathname).toBe('/api/unified-auth/cloud/callback')
  expect(reached.url.searchParams.get('code')).toEqual(expect.any(String))
  expect(reached.url.searchParams.get('state')).toBe(authorizationUrl.searchParams.get('state'))
}

async function relayStatus(app: RelayApp, cookie?: string) {
  const res = await app.inject({
    url: '/api/unified-auth/status',
    headers: cookie ? { cookie: `${sessionCookieName}=${cookie}` } : {},
  })
  expect(res.statusCode).toBe(200)
  return res.json()
}

async function forceRefresh(app: RelayApp) {
  const res = await app.inject({ method: 'POST', url: '/api/unified-auth/tokens/force-refresh' })
  expect(res.statusCode).toBe(200)
  return res.json() as { success: boolean; message: string; accessTokenExpiresAt: string | null }
}

/** Requests the cloud's token endpoint has answered so far (each refresh is one). */
function tokenRequests(): number {
  return cloud.logs.filter((line) => line.includes('"url":"/oauth/token"') && line.includes('incoming request')).length
}

describe('relay cloud sign-in against the real cloud', () => {
  it('signs in through HTTP redirects, keeps the tokens out of the browser, and reports the connection', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    const { callback, callbackUrl, browser } = await signInThroughCloud(cloud, relay.url, user.email, {
      query: '?returnTo=%2Fsettings%2Faccount',
    })
    expect(callback.status).toBe(302)
    expect(callback.headers.get('location')).toBe('/settings/account?cloud=connected')
    // What the browser saw: the code went to the relay, no token came back.
    expect(callbackUrl.searchParams.get('code')).toEqual(expect.any(String))
    const cookies = [...browser.cookies(new URL(relay.url).host).keys()]
    expect(cookies).not.toContain(sessionCookieName) // mode none: no relay session is needed
    const body = await callback.text()
    expect(body).not.toMatch(/eyJ/)

    const status = await relayStatus(relay.app)
    const expiresAt = Date.parse(defined(status.cloud?.accessTokenExpiresAt))
    expect(status).toMatchObject({
      mode: 'none',
      backendAuthenticated: true,
      hasValidLicense: true,
      cloudError: null,
      cloud: { userId: user.id, email: user.email, name: 'Ada' },
    })
    expect(expiresAt - Date.now()).toBeGreaterThan(14 * 60 * 1000)
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(15 * 60 * 1000)

    const sessions = await relay.app.inject({ url: '/api/unified-auth/cloud/sessions' })
    expect(sessions.statusCode).toBe(200)
    expect(sessions.json().sessions).toEqual([expect.objectContaining({ clientId: 'relay', current: true })])
    const login = await relay.app.inject({ url: '/api/notifications/history?category=auth' })
    expect(login.json().notifications.map((n: { message: string }) => n.message)).toEqual([
      'The relay is connected to the cloud as Ada',
    ])
  })

  it('sets up cloud mode from the setup screen and signs the browser in as the cloud user', async () => {
    const user = await addCloudUser(cloud, { name: 'Grace' })
    const relay = await startLinkedRelay(cloud)
    const { callback, browser } = await signInThroughCloud(cloud, relay.url, user.email, {
      query: '?mode=cloud&returnTo=%2F',
    })
    expect(callback.headers.get('location')).toBe('/?cloud=connected')
    const cookie = defined(browser.cookies(new URL(relay.url).host).get(sessionCookieName))
    expect(await relayStatus(relay.app, cookie)).toMatchObject({
      mode: 'cloud',
      setupRequired: false,
      isAuthenticated: true,
      user: { kind: 'cloud', id: user.id, name: 'Grace', email: user.email },
    })
    // Anybody else must sign in first; the sign-in itself stays reachable.
    expect((await relay.app.inject({ url: '/api/collectors' })).statusCode).toBe(401)
    expect(await relayStatus(relay.app)).toMatchObject({ isAuthenticated: false, cloud: null, user: null })
    expect((await relay.app.inject({ url: '/api/unified-auth/cloud/login' })).statusCode).toBe(302)

    // A cloud access token of the same account also opens the API (validated by the cloud, cached).
    const token = defined(await relay.app.services.cloud.tokens.getAccessToken()).token
    const bearer = await relay.app.inject({ url: '/api/collectors', headers: { authorization: `Bearer ${token}` } })
    expect(bearer.statusCode).toBe(200)
    // Another cloud account cannot take over a relay in cloud mode without signing in to it first.
    const stranger = await addCloudUser(cloud)
    const other = await signInThroughCloud(cloud, relay.url, stranger.email)
    expect(other.callback.headers.get('location')).toBe('/settings/account?cloud=other-account')
    expect(await relay.app.services.cloud.storedSession()).toMatchObject({ userId: user.id })
  })

  it('keeps the cloud session across a relay restart', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    await signInThroughCloud(cloud, relay.url, user.email)
    await relay.app.close()
    const restarted = await startLinkedRelay(cloud, { dataDir: relay.dataDir })
    const status = await relayStatus(restarted.app)
    expect(status).toMatchObject({ backendAuthenticated: true, cloud: { userId: user.id } })
  })

  it('refreshes once for 100 concurrent callers when the token is about to expire', async () => {
    const clock = createTestClock(new Date())
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud, { clock })
    await signInThroughCloud(cloud, relay.url, user.email)
    const manager = relay.app.services.cloud.tokens
    const first = defined(await manager.getAccessToken())
    const before = tokenRequests()
    // 9 minutes later the token has 6 minutes left: still handed out as it is.
    clock.advance(9 * 60 * 1000)
    expect((await manager.getAccessToken())?.token).toBe(first.token)
    expect(tokenRequests()).toBe(before)
    // 11 minutes later it has 4 minutes left: inside the 5-minute margin.
    clock.advance(2 * 60 * 1000)
    const tokens = await Promise.all(Array.from({ length: 100 }, () => manager.getAccessToken()))
    const distinct = new Set(tokens.map((token) => defined(token).token))
    expect(distinct.size).toBe(1)
    expect([...distinct][0]).not.toBe(first.token)
    expect(tokenRequests()).toBe(before + 1)
    expect(relay.logs.filter((line) => line.includes('cloud access token refreshed'))).toHaveLength(1)
    expect(await relayStatus(relay.app)).toMatchObject({ backendAuthenticated: true })
  })

  it('force-refresh drops the access token, keeps the refresh token and reports the new expiry', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    await signInThroughCloud(cloud, relay.url, user.email)
    const before = defined(await relay.app.services.cloud.tokens.getAccessToken())
    const storedBefore = storedRefreshToken(relay.dataDir)
    const reply = await forceRefresh(relay.app)
    expect(reply).toEqual({
      success: true,
      message: 'Access token refreshed',
      accessTokenExpiresAt: expect.any(String),
    })
    const after = defined(await relay.app.services.cloud.tokens.getAccessToken())
    expect(after.token).not.toBe(before.token)
    expect(after.expiresAt.toISOString()).toBe(reply.accessTokenExpiresAt)
    expect(storedRefreshToken(relay.dataDir)).not.toBe(storedBefore)
  })

  it('keeps the rotated refresh token when the relay process is killed right after a refresh', async () => {
    const user = await addCloudUser(cloud)
    const folder = tempDir('relay-crash-')
    const port = await freePort()
    const relayUrl = `http://127.0.0.1:${port}`
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'src/main.ts'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: {
        ...process.env,
        RELAY_PORT: String(port),
        RELAY_DATA_DIR: folder.path,
        CLOUD_URL: cloud.url,
        LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    })
    try {
      await waitFor(async () => (await fetch(`${relayUrl}/api/health`)).ok, 'the relay answering')
      await signInThroughCloud(cloud, relayUrl, user.email)
      const refreshed = await fetch(`${relayUrl}/api/unified-auth/tokens/force-refresh`, { method: 'POST' })
      expect(((await refreshed.json()) as { success: boolean }).success).toBe(true)
      child.kill('SIGKILL')
      await new Promise((resolve) => child.once('exit', resolve))
      const restarted = await startLinkedRelay(cloud, { dataDir: folder.path })
      expect((await forceRefresh(restarted.app)).success).toBe(true)
      expect(await relayStatus(restarted.app)).toMatchObject({ backendAuthenticated: true, cloud: { userId: user.id } })
    } finally {
      child.kill('SIGKILL')
      folder.remove()
    }
  })

  it('saves the rotated refresh token before using it: a restart right after a refresh stays signed in', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    await signInThroughCloud(cloud, relay.url, user.email)
    const original = defined(storedRefreshToken(relay.dataDir))
    expect((await forceRefresh(relay.app)).success).toBe(true)
    // What is on disk the moment the refresh answered is the rotated token, not the spent one.
    const onDisk = defined(storedRefreshToken(relay.dataDir))
    expect(onDisk).not.toBe(original)
    await relay.app.close()
    const restarted = await startLinkedRelay(cloud, { dataDir: relay.dataDir })
    expect((await forceRefresh(restarted.app)).success).toBe(true)
    expect(await relayStatus(restarted.app)).toMatchObject({ backendAuthenticated: true })
  })

  it('clears the session and asks for a new sign-in when an old refresh token is reused at the cloud', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    await signInThroughCloud(cloud, relay.url, user.email)
    const stolen = defined(storedRefreshToken(relay.dataDir))
    expect((await forceRefresh(relay.app)).success).toBe(true)
    // The thief presents the rotated-away token: the cloud revokes the whole grant.
    await expect(relay.app.services.cloud.oauth.refresh(stolen)).rejects.toMatchObject({ error: 'invalid_grant' })

    const reply = await forceRefresh(relay.app)
    expect(reply).toEqual({
      success: false,
      message: 'The cloud refused the stored credentials; sign in to the cloud again',
      accessTokenExpiresAt: null,
    })
    expect(storedRefreshToken(relay.dataDir)).toBeUndefined()
    expect(await relayStatus(relay.app)).toMatchObject({ backendAuthenticated: false, cloud: null })
    const pending = await relay.app.inject({ url: '/api/notifications/pending' })
    expect(pending.json().notifications).toContainEqual(
      expect.objectContaining({
        title: 'Cloud sign-in required',
        category: 'cloud',
        persistent: true,
        expiresAt: null,
      }),
    )
    const afterLoss = await relay.app.inject({ url: '/api/unified-auth/cloud/user-info' })
    expect(afterLoss.statusCode).toBe(401)
    expect(afterLoss.json().error).toBe('Backend is not authenticated with the cloud')
  })

  it('reports backendAuthenticated false while the cloud refuses the token, true again after a fresh call succeeds', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    await signInThroughCloud(cloud, relay.url, user.email)
    expect(await relayStatus(relay.app)).toMatchObject({ backendAuthenticated: true })
    // The cloud's clock runs 20 minutes ahead: every access token it sees has expired, fresh ones too.
    cloudClock.offset = 20 * 60 * 1000
    const refused = await relayStatus(relay.app)
    expect(refused).toMatchObject({ backendAuthenticated: false, cloud: { userId: user.id } })
    expect(refused.cloudError).toMatch(/did not accept/)
    // The frontend's cached view is still served, but the status never is.
    expect((await relay.app.inject({ url: '/api/unified-auth/cloud/user-info' })).statusCode).toBe(200)
    cloudClock.offset = 0
    expect(await relayStatus(relay.app)).toMatchObject({ backendAuthenticated: true, hasValidLicense: true })
  })

  it('serves user info from a 2-minute cache that a new sign-in invalidates', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    await signInThroughCloud(cloud, relay.url, user.email)
    const read = async () => {
      const res = await relay.app.inject({ url: '/api/unified-auth/cloud/user-info' })
      expect(res.statusCode).toBe(200)
      return res.json().userInfo
    }
    expect(await read()).toMatchObject({ userId: user.id, hasValidLicense: true })
    await cloud.app.services.licenses.setGifted(user.id, false)
    expect(await read()).toMatchObject({ hasValidLicense: true })
    await signInThroughCloud(cloud, relay.url, user.email)
    expect(await read()).toMatchObject({ hasValidLicense: false })
  })

  it('disconnects: revokes at the cloud and forgets the credentials, even when the cloud is down', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    await signInThroughCloud(cloud, relay.url, user.email)
    const refreshToken = defined(storedRefreshToken(relay.dataDir))
    const res = await relay.app.inject({ method: 'POST', url: '/api/unified-auth/cloud/logout' })
    expect(res.statusCode).toBe(200)
    expect(storedRefreshToken(relay.dataDir)).toBeUndefined()
    await expect(relay.app.services.cloud.oauth.refresh(refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' })
    expect(await relayStatus(relay.app)).toMatchObject({ backendAuthenticated: false, cloud: null })

    // Signed in again, then the cloud becomes unreachable: disconnecting still forgets everything here.
    await signInThroughCloud(cloud, relay.url, user.email)
    await relay.app.close()
    const unreachable = await startLinkedRelay(cloud, {
      dataDir: relay.dataDir,
      env: { CLOUD_URL: `http://127.0.0.1:${await freePort()}` },
    })
    expect(storedRefreshToken(relay.dataDir)).toEqual(expect.any(String))
    const offline = await unreachable.app.inject({ method: 'POST', url: '/api/unified-auth/cloud/logout' })
    expect(offline.statusCode).toBe(200)
    expect(storedRefreshToken(relay.dataDir)).toBeUndefined()
    expect(unreachable.logs.join('\n')).toMatch(/forgotten locally, but not revoked at the cloud/)
  })

  it('refuses a forged state and a replayed callback, storing nothing', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    const browser = createHttpBrowser()
    const { callback, callbackUrl } = await signInThroughCloud(cloud, relay.url, user.email, { browser })
    expect(callback.status).toBe(302)
    const replay = await browser.request(callbackUrl)
    expect(replay.status).toBe(400)
    expect(await replay.json()).toMatchObject({ code: 'INVALID_REQUEST' })

    const fresh = await startLinkedRelay(cloud)
    const attacker = createHttpBrowser()
    await attacker.request(`${fresh.url}/api/unified-auth/cloud/login`)
    const forged = new URL(callbackUrl.pathname + callbackUrl.search, fresh.url)
    forged.searchParams.set('state', 'forged-state')
    const res = await attacker.request(forged)
    expect(res.status).toBe(400)
    expect(await fresh.app.services.cloud.storedSession()).toBeNull()
  })
})

describe('relay cloud sign-in after a sign-out on a shared browser', () => {
  it('asks for the cloud password on every sign-in, though the cloud session alone would sign the browser in', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    const browser = createHttpBrowser()
    await signInThroughCloud(cloud, relay.url, user.email, { browser })
    expect(browser.cookies(new URL(cloud.url).host).has('_session')).toBe(true)

    const again = await startCloudSignIn(browser, relay.url)
    expect(again.authorizationUrl.searchParams.get('prompt')).toBe('login')
    await expectPasswordForm(again.reached)
    // Control: the browser's cloud session is alive, and only the prompt keeps it from being used.
    await expectSignedInSilentlyWithoutPrompt(browser, again.authorizationUrl, relay.url)
  })

  it('shows the cloud password form after a relay sign-out in cloud mode, and signs in with it', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    const browser = createHttpBrowser()
    const relayHost = new URL(relay.url).host
    await signInThroughCloud(cloud, relay.url, user.email, { browser, query: '?mode=cloud' })
    expect(browser.cookies(relayHost).has(sessionCookieName)).toBe(true)

    const signOut = await browser.request(`${relay.url}/api/unified-auth/logout`, {
      method: 'POST',
      headers: { origin: relay.url },
    })
    expect(signOut.status).toBe(200)
    expect(browser.cookies(relayHost).has(sessionCookieName)).toBe(false)
    expect(await relayStatus(relay.app)).toMatchObject({ mode: 'cloud', isAuthenticated: false })

    const again = await startCloudSignIn(browser, relay.url)
    await expectPasswordForm(again.reached)
    // The relay sign-out left the browser's cloud session as it was: without the prompt it would be used.
    await expectSignedInSilentlyWithoutPrompt(browser, again.authorizationUrl, relay.url)

    // The test browser keeps one interaction cookie per host: the form is reached once more to submit it.
    const retry = await startCloudSignIn(browser, relay.url)
    await expectPasswordForm(retry.reached)
    const callback = await submitPasswordForm(browser, retry.reached.url, user.email)
    expect(callback.headers.get('location')).toBe('/settings/account?cloud=connected')
    const cookie = defined(browser.cookies(relayHost).get(sessionCookieName))
    expect(await relayStatus(relay.app, cookie)).toMatchObject({
      isAuthenticated: true,
      user: { kind: 'cloud', id: user.id },
    })
  })

  it("ends the browser's cloud sign-in when the relay signs out of the cloud, and leaves it no usable token", async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    const browser = createHttpBrowser()
    await signInThroughCloud(cloud, relay.url, user.email, { browser })
    const refreshToken = defined(storedRefreshToken(relay.dataDir))
    const accessToken = defined(await relay.app.services.cloud.tokens.getAccessToken()).token

    const disconnect = await browser.request(`${relay.url}/api/unified-auth/cloud/logout`, {
      method: 'POST',
      headers: { origin: relay.url },
    })
    expect(disconnect.status).toBe(200)
    expect(storedRefreshToken(relay.dataDir)).toBeUndefined()
    expect(await relay.app.services.cloud.tokens.getAccessToken()).toBeNull()
    await expect(relay.app.services.cloud.oauth.refresh(refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' })
    // The cloud's UserInfo endpoint checks the session of the token: it has ended.
    const me = await fetch(`${cloud.url}/oauth/me`, { headers: { authorization: `Bearer ${accessToken}` } })
    expect(me.status).toBe(401)

    // Even a request without `prompt=login` now meets the password form: the browser's cloud sign-in is over.
    const again = await startCloudSignIn(browser, relay.url)
    const withoutPrompt = new URL(again.authorizationUrl)
    withoutPrompt.searchParams.delete('prompt')
    await expectPasswordForm(await browser.follow(withoutPrompt, (next) => next.origin === cloud.url))
  })

  it('shows the cloud password form after a disconnect, so another cloud account can be connected', async () => {
    const ada = await addCloudUser(cloud)
    const grace = await addCloudUser(cloud, { name: 'Grace' })
    const relay = await startLinkedRelay(cloud)
    const browser = createHttpBrowser()
    await signInThroughCloud(cloud, relay.url, ada.email, { browser })
    expect(await relayStatus(relay.app)).toMatchObject({ cloud: { userId: ada.id } })

    const disconnect = await browser.request(`${relay.url}/api/unified-auth/cloud/logout`, {
      method: 'POST',
      headers: { origin: relay.url },
    })
    expect(disconnect.status).toBe(200)
    expect(await relayStatus(relay.app)).toMatchObject({ backendAuthenticated: false, cloud: null })

    const again = await startCloudSignIn(browser, relay.url)
    await expectPasswordForm(again.reached)
    const callback = await submitPasswordForm(browser, again.reached.url, grace.email)
    expect(callback.headers.get('location')).toBe('/settings/account?cloud=connected')
    expect(await relayStatus(relay.app)).toMatchObject({
      backendAuthenticated: true,
      cloud: { userId: grace.id, name: 'Grace', email: grace.email },
    })
    expect(await relay.app.services.cloud.storedSession()).toMatchObject({ userId: grace.id })
  })
})

describe('relay cloud credentials at rest and in logs', () => {
  it('never writes a refresh or access token in plaintext to the database or the logs', async () => {
    const user = await addCloudUser(cloud)
    const relay = await startLinkedRelay(cloud)
    await signInThroughCloud(cloud, relay.url, user.email)
    const secrets: string[] = []
    for (let i = 0; i < 3; i++) {
      secrets.push(defined(storedRefreshToken(relay.dataDir)))
      secrets.push(defined(await relay.app.services.cloud.tokens.getAccessToken()).token)
      expect((await forceRefresh(relay.app)).success).toBe(true)
      await relayStatus(relay.app)
    }
    const files = ['relay.db', 'relay.db-wal'].map((file) => readFileSync(path.join(relay.dataDir, file)))
    const disk = Buffer.concat(files)
    const logs = relay.logs.join('\n')
    expect(logs).toContain('cloud access token refreshed')
    for (const secret of secrets) {
      expect(disk.includes(Buffer.from(secret))).toBe(false)
      expect(logs.includes(secret)).toBe(false)
      // Nor the signature part alone (a JWT's most secret-bearing piece).
      expect(logs.includes(secret.split('.').at(-1) ?? secret)).toBe(false)
    }
    expect(decodeJwt(defined(secrets[1])).sub).toBe(user.id)
  })
})
