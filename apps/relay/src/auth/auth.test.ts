import { readFileSync } from 'node:fs'
import path from 'node:path'
import { AuthStatus, sessionCookieName } from '@relay/contracts'
import { createTestClock, defined, tempDir } from '@relay/testkit'
import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import { startRelay, testConfig } from '../../test/app.js'
import { createApp, type RelayApp } from '../app.js'

const json = { 'content-type': 'application/json' }
const ada = { username: 'ada', password: 'correct horse battery' }

function cookieOf(res: { cookies: Array<{ name: string; value: string }> }): string {
  return defined(
    res.cookies.find((cookie) => cookie.name === sessionCookieName),
    'session cookie',
  ).value
}

const withSession = (token: string) => ({ cookie: `${sessionCookieName}=${token}` })

async function status(app: RelayApp, token?: string): Promise<AuthStatus> {
  const res = await app.inject({ url: '/api/unified-auth/status', headers: token ? withSession(token) : {} })
  expect(res.statusCode).toBe(200)
  const body = res.json()
  expect(Value.Check(AuthStatus, body)).toBe(true)
  return body
}

function post(app: RelayApp, url: string, body?: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url,
    headers: body === undefined ? headers : { ...json, ...headers },
    payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
}

async function setUpLocal(app: RelayApp): Promise<string> {
  const res = await post(app, '/api/unified-auth/local/setup', ada)
  expect(res.statusCode).toBe(201)
  return cookieOf(res)
}

async function pendingKinds(app: RelayApp, token: string) {
  const res = await app.inject({ url: '/api/notifications/history?category=auth', headers: withSession(token) })
  return res.json().notifications as Array<{ title: string; message: string; persistent: boolean }>
}

describe('relay auth: modes and first-run setup', () => {
  it('starts in mode none, open, with setup still to do', async () => {
    const { app } = await startRelay()
    expect(await status(app)).toEqual({
      mode: 'none',
      setupRequired: true,
      hasLocalUsers: false,
      isAuthenticated: true,
      backendAuthenticated: false,
      user: null,
      cloud: null,
      hasValidLicense: null,
      cloudError: null,
    })
    expect((await app.inject({ url: '/api/notifications/pending' })).statusCode).toBe(200)
  })

  it('finishes setup in mode none', async () => {
    const { app } = await startRelay()
    const res = await post(app, '/api/unified-auth/mode', { mode: 'none' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ success: true, mode: 'none' })
    expect(await status(app)).toMatchObject({ mode: 'none', setupRequired: false })
  })

  it('refuses local mode without an account and cloud mode without a cloud connection', async () => {
    const { app } = await startRelay()
    const local = await post(app, '/api/unified-auth/mode', { mode: 'local' })
    expect(local.statusCode).toBe(409)
    expect(local.json()).toMatchObject({
      success: false,
      code: 'CONFLICT',
      error: expect.stringMatching(/local account/),
    })
    const cloud = await post(app, '/api/unified-auth/mode', { mode: 'cloud' })
    expect(cloud.statusCode).toBe(409)
    expect(cloud.json().error).toMatch(/Connect the relay to the cloud/)
    expect(await status(app)).toMatchObject({ mode: 'none', setupRequired: true })
  })

  it('creates the first local account, switches to local mode and signs in with a safe cookie', async () => {
    const { app } = await startRelay()
    const res = await post(app, '/api/unified-auth/local/setup', ada)
    expect(res.statusCode).toBe(201)
    expect(res.json()).toEqual({
      success: true,
      user: { kind: 'local', id: expect.any(String), name: 'ada', email: null },
    })
    const cookie = defined(res.cookies.find((c) => c.name === sessionCookieName))
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', maxAge: 7 * 24 * 60 * 60 })
    expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(await status(app, cookie.value)).toMatchObject({
      mode: 'local',
      setupRequired: false,
      hasLocalUsers: true,
      isAuthenticated: true,
      user: { kind: 'local', name: 'ada' },
    })
    const again = await post(
      app,
      '/api/unified-auth/local/setup',
      { username: 'eve', password: 'another password' },
      withSession(cookie.value),
    )
    expect(again.statusCode).toBe(409)
    expect(again.json().code).toBe('CONFLICT')
  })

  it('keeps the token out of the database: only its hash is stored', async () => {
    const { app, dataDir } = await startRelay()
    const token = await setUpLocal(app)
    const files = ['relay.db', 'relay.db-wal'].map((file) => path.join(dataDir, file))
    const bytes = Buffer.concat(files.map((file) => readFileSync(file)))
    expect(bytes.includes(Buffer.from(token))).toBe(false)
    expect(bytes.includes(Buffer.from(ada.password))).toBe(false)
  })
})

describe('relay auth: the guard in local mode', () => {
  it('requires a session on every /api route except status, sign-in, callback and health', async () => {
    const { app } = await startRelay()
    const token = await setUpLocal(app)
    for (const url of [
      '/api/notifications/pending',
      '/api/collectors',
      '/api/feature-flags',
      '/api/collectors/stats',
    ]) {
      const res = await app.inject({ url })
      expect(res.statusCode, url).toBe(401)
      expect(res.json()).toEqual({ success: false, code: 'UNAUTHORIZED', error: 'Sign in to use the relay' })
      expect((await app.inject({ url, headers: withSession(token) })).statusCode, url).toBe(200)
    }
    expect((await app.inject({ url: '/api/health' })).statusCode).toBe(200)
    expect(await status(app)).toMatchObject({ isAuthenticated: false, user: null, mode: 'local' })
    const forged = await app.inject({ url: '/api/collectors', headers: withSession('not-a-session') })
    expect(forged.statusCode).toBe(401)
    // Connecting the cloud is an action of a signed-in user in local mode.
    expect((await app.inject({ url: '/api/unified-auth/cloud/login' })).statusCode).toBe(401)
    expect((await post(app, '/api/unified-auth/mode', { mode: 'none' })).statusCode).toBe(401)
  })

  it('signs in, tells a wrong password plainly, and raises the sign-in notifications', async () => {
    const { app } = await startRelay()
    const admin = await setUpLocal(app)
    const wrong = await post(app, '/api/unified-auth/local/login', { username: 'ada', password: 'wrong password' })
    expect(wrong.statusCode).toBe(401)
    expect(wrong.json()).toEqual({ success: false, code: 'UNAUTHORIZED', error: 'Wrong username or password' })
    expect(wrong.cookies).toEqual([])
    const unknown = await post(app, '/api/unified-auth/local/login', { username: 'bob', password: 'whatever1' })
    expect(unknown.json().error).toBe('Wrong username or password')

    const right = await post(app, '/api/unified-auth/local/login', { username: 'ADA', password: ada.password })
    expect(right.statusCode).toBe(200)
    expect(right.json().user).toMatchObject({ kind: 'local', name: 'ada' })
    const token = cookieOf(right)
    expect(token).not.toBe(admin)
    expect(await status(app, token)).toMatchObject({ isAuthenticated: true, user: { name: 'ada' } })

    const notes = await pendingKinds(app, token)
    expect(notes.filter((n) => n.title === 'Sign-in failed').map((n) => [n.message, n.persistent])).toEqual([
      ['Sign-in failed for bob', true],
      ['Sign-in failed for ada', true],
    ])
    expect(notes.filter((n) => n.title === 'Signed in')).toHaveLength(2)
  })

  it('signs out: the cookie is cleared, the session ends, and a notification says so', async () => {
    const { app } = await startRelay()
    const token = await setUpLocal(app)
    const res = await post(app, '/api/unified-auth/logout', undefined, withSession(token))
    expect(res.statusCode).toBe(200)
    const cleared = defined(res.cookies.find((c) => c.name === sessionCookieName))
    expect(cleared.value).toBe('')
    expect((await app.inject({ url: '/api/collectors', headers: withSession(token) })).statusCode).toBe(401)
    const again = cookieOf(await post(app, '/api/unified-auth/local/login', ada))
    expect((await pendingKinds(app, again)).map((n) => n.message)).toContain('ada signed out')
  })

  it('throttles failed sign-ins per username, even with the right password, until a try is regained', async () => {
    const clock = createTestClock(new Date())
    const { app } = await startRelay({ clock })
    await setUpLocal(app)
    for (let i = 0; i < 5; i++) {
      expect((await post(app, '/api/unified-auth/local/login', { ...ada, password: `wrong ${i}` })).statusCode).toBe(
        401,
      )
    }
    // 5 tries regained over 15 minutes: the next one comes back after 3.
    const throttled = await post(app, '/api/unified-auth/local/login', ada)
    expect(throttled.statusCode).toBe(429)
    expect(throttled.json()).toMatchObject({
      code: 'RATE_LIMITED',
      error: expect.stringMatching(/try again in 3 minutes/),
    })
    expect(Number(throttled.headers['retry-after'])).toBe(3 * 60)
    clock.advance(3 * 60 * 1000 - 1000)
    expect((await post(app, '/api/unified-auth/local/login', ada)).statusCode).toBe(429)
    clock.advance(1000)
    expect((await post(app, '/api/unified-auth/local/login', ada)).statusCode).toBe(200)
  })

  it('ends sessions after 7 days, and keeps them across a restart until then', async () => {
    const clock = createTestClock(new Date())
    const folder = tempDir()
    const config = testConfig(folder.path, { RELAY_WEB_DIR: folder.path })
    try {
      const first = await createApp(config, { clock })
      const token = await setUpLocal(first)
      await first.close()
      const second = await createApp(config, { clock })
      expect((await second.inject({ url: '/api/collectors', headers: withSession(token) })).statusCode).toBe(200)
      clock.advance(7 * 24 * 60 * 60 * 1000)
      expect((await second.inject({ url: '/api/collectors', headers: withSession(token) })).statusCode).toBe(401)
      await second.close()
    } finally {
      folder.remove()
    }
  })

  it('refuses local sign-in unless the relay is in local mode', async () => {
    const { app } = await startRelay()
    const res = await post(app, '/api/unified-auth/local/login', ada)
    expect(res.statusCode).toBe(409)
    expect(res.json().error).toMatch(/not in local mode/)
  })
})

describe('relay auth: cross-site and rebinding protection', () => {
  it('refuses state changes from another origin or site', async () => {
    const { app } = await startRelay()
    const body = { message: 'hello' }
    const evil = await post(app, '/api/notifications', body, { origin: 'http://evil.example' })
    expect(evil.statusCode).toBe(403)
    expect(evil.json()).toMatchObject({ code: 'FORBIDDEN', error: 'Cross-site request refused' })
    const crossSite = await post(app, '/api/notifications', body, { 'sec-fetch-site': 'cross-site' })
    expect(crossSite.statusCode).toBe(403)
    const same = await post(app, '/api/notifications', body, { origin: 'http://localhost:80', host: 'localhost:80' })
    expect(same.statusCode).toBe(201)
    const history = await app.inject({ url: '/api/notifications/history' })
    expect(history.json().total).toBe(1)
  })

  it('answers only to loopback host names while listening on loopback (DNS rebinding)', async () => {
    const { app } = await startRelay()
    const res = await app.inject({ url: '/api/collectors', headers: { host: 'attacker.example:8080' } })
    expect(res.statusCode).toBe(403)
    expect((await app.inject({ url: '/api/collectors', headers: { host: '127.0.0.1:8080' } })).statusCode).toBe(200)
  })

  it('will not start open to the network in mode none unless told to', async () => {
    const folder = tempDir()
    try {
      const env = { RELAY_WEB_DIR: folder.path, RELAY_HOST: '0.0.0.0' }
      await expect(createApp(testConfig(folder.path, env))).rejects.toThrow(/RELAY_ALLOW_OPEN_NETWORK/)
      const app = await createApp(testConfig(folder.path, { ...env, RELAY_ALLOW_OPEN_NETWORK: 'true' }))
      await app.close()
    } finally {
      folder.remove()
    }
  })
})

describe('relay auth: bad input', () => {
  it('answers malformed, mistyped, missing and oversized fields with 400 and stores nothing', async () => {
    const { app } = await startRelay()
    const cases: Array<[string, unknown]> = [
      ['/api/unified-auth/local/setup', '{"username": "ada",'],
      ['/api/unified-auth/local/setup', { username: 'ada' }],
      ['/api/unified-auth/local/setup', { username: 42, password: ada.password }],
      ['/api/unified-auth/local/setup', { username: 'a'.repeat(65), password: ada.password }],
      ['/api/unified-auth/local/setup', { username: 'ada', password: 'p'.repeat(257) }],
      ['/api/unified-auth/local/setup', { username: 'ada', password: 'short' }],
      ['/api/unified-auth/local/setup', { username: ' ada', password: ada.password }],
      ['/api/unified-auth/local/setup', { ...ada, admin: true }],
      ['/api/unified-auth/local/login', { username: 'ada', password: 'p'.repeat(257) }],
      ['/api/unified-auth/local/login', { username: '', password: ada.password }],
      ['/api/unified-auth/mode', { mode: 'open' }],
      ['/api/unified-auth/mode', { mode: 1 }],
      ['/api/unified-auth/mode', {}],
      ['/api/unified-auth/mode', 'not json'],
    ]
    for (const [url, body] of cases) {
      const res = await post(app, url, body)
      expect(res.statusCode, `${url} ${JSON.stringify(body)}`).toBe(400)
      expect(res.json()).toMatchObject({ success: false, code: 'INVALID_REQUEST', error: expect.any(String) })
    }
    expect(await status(app)).toMatchObject({ mode: 'none', setupRequired: true, hasLocalUsers: false })
  })

  it('refuses a returnTo that leaves the relay', async () => {
    const { app } = await startRelay()
    for (const returnTo of ['//evil.example/x', 'https://evil.example', '/\\evil.example', 'relative']) {
      const res = await app.inject({ url: `/api/unified-auth/cloud/login?returnTo=${encodeURIComponent(returnTo)}` })
      expect(res.statusCode, returnTo).toBe(400)
    }
  })

  it('answers cloud calls without a cloud session with 401 and the spec message', async () => {
    const { app } = await startRelay()
    for (const [method, url] of [
      ['POST', '/api/unified-auth/tokens/force-refresh'],
      ['GET', '/api/unified-auth/cloud/user-info'],
      ['GET', '/api/unified-auth/cloud/sessions'],
      ['DELETE', '/api/unified-auth/cloud/sessions/abc'],
    ] as const) {
      const res = await app.inject({ method, url })
      expect(res.statusCode, url).toBe(401)
      expect(res.json()).toEqual({
        success: false,
        code: 'CLOUD_NOT_AUTHENTICATED',
        error: 'Backend is not authenticated with the cloud',
      })
    }
    expect((await post(app, '/api/unified-auth/cloud/logout')).statusCode).toBe(200)
  })

  it('refuses a callback that no sign-in started', async () => {
    const { app } = await startRelay()
    const res = await app.inject({ url: '/api/unified-auth/cloud/callback?code=abc&state=forged' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'INVALID_REQUEST', error: expect.stringMatching(/start it again/) })
    const page = await app.inject({
      url: '/api/unified-auth/cloud/callback?code=abc&state=forged',
      headers: { accept: 'text/html' },
    })
    expect(page.statusCode).toBe(400)
    expect(page.headers['content-type']).toMatch(/text\/html/)
    expect(page.body).toContain('Back to Relay')
  })
})
