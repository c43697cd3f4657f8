import { createHash, randomUUID } from 'node:crypto'
import { HOUR, relayClientId, relayScope } from '@relay/contracts'
import { createHttpBrowser, createTestClock, defined, type HttpBrowser, submitForm } from '@relay/testkit'
import * as client from 'openid-client'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { databaseKinds } from '../../test/database.js'
import { linkIn, type MailInbox, startMailInbox } from '../../test/mail-inbox.js'
import { mailLimits } from './service.js'

const callback = 'http://127.0.0.1:53682/api/unified-auth/cloud/callback'
const password = 'correct horse battery staple'

/** A fresh address per use, so tests share one cloud without meeting. */
const newAddress = (name: string) => `${name}-${randomUUID().slice(0, 8)}@example.com`

describe.each(databaseKinds)('registration on %s', (kind) => {
  let inbox: MailInbox
  let cloud: TestCloud
  let relay: client.Configuration
  const clock = createTestClock(new Date())

  beforeAll(async () => {
    inbox = await startMailInbox()
    cloud = await startTestCloud(kind, { env: { SMTP_URL: inbox.url }, clock })
    relay = await client.discovery(new URL(`${cloud.url}/oauth`), relayClientId, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    })
  })

  // Every test starts with full mail buckets: they refill within the hour that passes here.
  beforeEach(() => {
    clock.advance(HOUR)
  })

  afterAll(async () => {
    await cloud?.close()
    await inbox?.close()
  })

  const url = (path: string) => new URL(path, cloud.url)
  const post = (path: string | URL, fields: Record<string, string>, browser = createHttpBrowser()) =>
    submitForm(browser, new URL(path, cloud.url), fields)

  /** Starts signing in from a relay and stops at the cloud's sign-in page. */
  async function openSignIn(browser: HttpBrowser) {
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const authorization = client.buildAuthorizationUrl(relay, {
      redirect_uri: callback,
      scope: relayScope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    })
    const atPage = await browser.follow(authorization)
    expect(atPage.url.pathname).toMatch(/^\/interaction\//)
    const uid = defined(atPage.url.pathname.split('/')[2])
    return { uid, page: await atPage.response.text(), verifier, state }
  }

  /** Submits the sign-in page; returns the relay's tokens, or the page's answer when it refused. */
  async function signIn(
    browser: HttpBrowser,
    opened: Awaited<ReturnType<typeof openSignIn>>,
    email: string,
    pw = password,
  ) {
    const login = await post(`/interaction/${opened.uid}/login`, { email, password: pw }, browser)
    if (login.status !== 303) {
      return { refused: login, tokens: undefined }
    }
    const done = await browser.follow(url(defined(login.headers.get('location'))), (next) => next.origin === cloud.url)
    const tokens = await client.authorizationCodeGrant(relay, done.url, {
      pkceCodeVerifier: opened.verifier,
      expectedState: opened.state,
    })
    return { refused: undefined, tokens }
  }

  async function signUp(email: string, extra: Record<string, string> = {}) {
    const answer = await post('/sign-up', { email, name: 'Ada', password, ...extra })
    expect(answer.status).toBe(200)
    return linkIn(inbox.last(email), `${cloud.url}/verify-email`)
  }

  /** Uses a mailed link as a browser does: opens it, then sends the form it shows. */
  async function follow(link: URL, fields: Record<string, string> = {}, browser = createHttpBrowser()) {
    const opened = await browser.request(link)
    expect(opened.status).toBe(200)
    const form = await opened.text()
    const action = defined(/<form method="post" action="([^"]+)"/.exec(form)?.[1])
    const hidden = Object.fromEntries(
      [...form.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
    )
    return post(action, { ...hidden, ...fields }, browser)
  }

  it('signs up from the relay sign-in page, confirms the address by mail, then signs the relay in', async () => {
    const browser = createHttpBrowser()
    const opened = await openSignIn(browser)
    expect(opened.page).toContain(`href="/sign-up?uid=${opened.uid}">Create an account</a>`)
    expect(opened.page).toContain(`href="/forgot-password?uid=${opened.uid}">Forgot your password?</a>`)

    const form = await browser.request(url(`/sign-up?uid=${opened.uid}`))
    expect(form.status).toBe(200)
    expect(await form.text()).toContain(`<input type="hidden" name="uid" value="${opened.uid}">`)

    const email = newAddress('ada')
    const answer = await post('/sign-up', { email, name: 'Ada Lovelace', password, uid: opened.uid }, browser)
    expect(answer.status).toBe(200)
    expect(await answer.text()).toContain(`We sent an email to ${email}.`)
    const mail = inbox.last(email)
    expect(mail.subject).toBe('Confirm your email address for Relay Cloud')
    const link = linkIn(mail, `${cloud.url}/verify-email`)
    expect(link.searchParams.get('uid')).toBe(opened.uid)
    const token = defined(link.searchParams.get('token'))

    // Only the token's hash is kept, unused until the form is sent: opening the link twice uses nothing.
    const account = defined(await cloud.app.services.directory.findByEmail(email))
    expect(account).toMatchObject({ name: 'Ada Lovelace', emailVerified: false })
    for (let open = 0; open < 2; open++) {
      const page = await browser.request(link)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('Confirm my email address')
    }
    const rows = await cloud.database.db
      .selectFrom('email_tokens')
      .selectAll()
      .where('user_id', '=', account.id)
      .execute()
    expect(rows).toEqual([
      expect.objectContaining({
        token_hash: createHash('sha256').update(token).digest('hex'),
        purpose: 'verify-email',
        used_at: null,
      }),
    ])
    expect(JSON.stringify(rows)).not.toContain(token)

    const verified = await post('/verify-email', { token, uid: opened.uid }, browser)
    expect(verified.status).toBe(200)
    const verifiedPage = await verified.text()
    expect(verifiedPage).toContain('Your email is verified')
    expect(verifiedPage).toContain(`href="/interaction/${opened.uid}">Continue signing in to your relay</a>`)
    expect((await cloud.app.services.directory.findByEmail(email))?.emailVerified).toBe(true)

    const { tokens } = await signIn(browser, opened, email)
    expect(defined(tokens).refresh_token).toEqual(expect.any(String))

    const again = await post('/verify-email', { token })
    expect(again.status).toBe(400)
    expect(await again.text()).toContain('This link is not valid any more')
    expect(cloud.logs.join('')).not.toContain(token)
  })

  it('refuses to sign in an unconfirmed account, and sends the link again when asked', async () => {
    const email = newAddress('grace')
    const first = await signUp(email)
    const browser = createHttpBrowser()
    const opened = await openSignIn(browser)

    const wrong = await signIn(browser, opened, email, 'not the password')
    expect(wrong.refused?.status).toBe(401)
    const refused = defined((await signIn(browser, opened, email)).refused)
    expect(refused.status).toBe(403)
    const page = await refused.text()
    expect(page).toContain(`Confirm your email address first: we sent a link to ${email}.`)
    expect(page).toContain('<form method="post" action="/sign-up/resend">')

    const resent = await post('/sign-up/resend', { email, uid: opened.uid }, browser)
    expect(resent.status).toBe(200)
    expect(await resent.text()).toContain(`We sent an email to ${email}.`)
    expect(inbox.to(email)).toHaveLength(2)
    const second = linkIn(inbox.last(email), `${cloud.url}/verify-email`)
    expect(second.searchParams.get('token')).not.toBe(first.searchParams.get('token'))

    expect((await follow(second)).status).toBe(200)
    // Confirmed: the older link is spent too.
    expect((await browser.request(first)).status).toBe(400)
    expect((await signIn(browser, opened, email)).tokens).toBeDefined()

    // A confirmed address gets no more links, and the answer does not say so.
    const none = await post('/sign-up/resend', { email })
    expect(none.status).toBe(200)
    expect(inbox.to(email)).toHaveLength(2)
  })

  it('answers a sign-up with a known address exactly like a new one, and mails the owner a note instead', async () => {
    const known = newAddress('known')
    await cloud.addUser(known, 'the owners password', 'Owner')
    const fresh = newAddress('fresh')
    const answers = []
    for (const email of [known, fresh]) {
      const answer = await post('/sign-up', { email, name: 'Mallory', password })
      answers.push({ status: answer.status, body: (await answer.text()).replaceAll(email, '<address>') })
    }
    expect(answers[0]).toEqual(answers[1])

    const note = inbox.last(known)
    expect(note.subject).toBe('Someone tried to create a Relay Cloud account with your address')
    expect(() => linkIn(note, `${cloud.url}/verify-email`)).toThrow()
    expect(linkIn(note, `${cloud.url}/forgot-password`)).toBeDefined()
    // The account is as it was.
    const owner = await cloud.app.services.directory.authenticate(known, 'the owners password')
    expect(owner).toMatchObject({ name: 'Owner', emailVerified: true })
    expect(await cloud.app.services.directory.authenticate(known, password)).toBeNull()
  })

  it('answers a reset request the same whether or not the address has an account', async () => {
    const known = newAddress('known')
    await cloud.addUser(known, password)
    const unknown = newAddress('unknown')
    const answers = []
    for (const email of [known, unknown]) {
      const answer = await post('/forgot-password', { email })
      answers.push({ status: answer.status, body: (await answer.text()).replaceAll(email, '<address>') })
    }
    expect(answers[0]).toEqual(answers[1])
    expect(answers[0]?.status).toBe(200)
    expect(linkIn(inbox.last(known), `${cloud.url}/reset-password`)).toBeDefined()
    const note = inbox.last(unknown)
    expect(note.text).toContain('there is no account for it')
    expect(() => linkIn(note, `${cloud.url}/reset-password`)).toThrow()
  })

  it('resets a password by mail: the old password and every refresh token stop working', async () => {
    const email = newAddress('reset')
    const accountId = await cloud.addUser(email, password)
    const browser = createHttpBrowser()
    const { tokens } = await signIn(browser, await openSignIn(browser), email)
    const refreshToken = defined(tokens?.refresh_token)
    const other = createHttpBrowser()
    const { tokens: second } = await signIn(other, await openSignIn(other), email)
    const bystander = newAddress('bystander')
    await cloud.addUser(bystander, password)
    const third = createHttpBrowser()
    const { tokens: bystanders } = await signIn(third, await openSignIn(third), bystander)

    expect((await post('/forgot-password', { email })).status).toBe(200)
    const mail = inbox.last(email)
    expect(mail.subject).toBe('Reset your Relay Cloud password')
    const link = linkIn(mail, `${cloud.url}/reset-password`)
    const token = defined(link.searchParams.get('token'))

    const form = await browser.request(link)
    expect(form.status).toBe(200)
    expect(await form.text()).toContain('New password again')
    const newPassword = 'a brand new passphrase'
    const mismatch = await post('/reset-password', { token, password: newPassword, confirm: 'something else' })
    expect(mismatch.status).toBe(400)
    expect(await mismatch.text()).toContain('The two passwords are not the same.')
    const short = await post('/reset-password', { token, password: 'short', confirm: 'short' })
    expect(short.status).toBe(400)
    expect(await short.text()).toContain('Choose a password of 8 to 256 characters.')

    const reset = await post('/reset-password', { token, password: newPassword, confirm: newPassword })
    expect(reset.status).toBe(200)
    expect(await reset.text()).toContain('Your password was changed')

    for (const refresh of [refreshToken, defined(second?.refresh_token)]) {
      await expect(client.refreshTokenGrant(relay, refresh)).rejects.toMatchObject({ error: 'invalid_grant' })
    }
    const grants = await cloud.database.db
      .selectFrom('oauth_payloads')
      .select('model')
      .where('account_id', '=', accountId)
      .where('model', 'in', ['Grant', 'RefreshToken', 'Session'])
      .execute()
    expect(grants).toEqual([])
    // Another account's sessions are untouched.
    await expect(client.refreshTokenGrant(relay, defined(bystanders?.refresh_token))).resolves.toBeDefined()
    // The browser that was signed in at the cloud has to give the new password too.
    const again = await openSignIn(browser)
    expect(again.page).toContain('Sign in to Relay Cloud')
    expect(await cloud.app.services.directory.authenticate(email, password)).toBeNull()
    expect((await signIn(browser, again, email, newPassword)).tokens).toBeDefined()

    const reused = await post('/reset-password', {
      token,
      password: 'yet another passphrase',
      confirm: 'yet another passphrase',
    })
    expect(reused.status).toBe(400)
    expect(await reused.text()).toContain('This link is not valid any more')
    expect((await browser.request(link)).status).toBe(400)
    expect(cloud.logs.join('')).not.toContain(token)
    expect(cloud.logs.join('')).not.toContain(newPassword)
  })

  it('confirms an unconfirmed address by a password reset, since the link reached it', async () => {
    const email = newAddress('squatted')
    await signUp(email)
    // Someone else signed up with this address first; its owner resets the password and owns the account.
    await post('/forgot-password', { email })
    const reset = linkIn(inbox.last(email), `${cloud.url}/reset-password`)
    const newPassword = 'the real owners passphrase'
    expect((await follow(reset, { password: newPassword, confirm: newPassword })).status).toBe(200)
    expect(await cloud.app.services.directory.authenticate(email, newPassword)).toMatchObject({ emailVerified: true })
    expect(await cloud.app.services.directory.authenticate(email, password)).toBeNull()
  })

  it('refuses expired links: a confirmation after 24 hours, a reset after 1 hour', async () => {
    const email = newAddress('late')
    const verify = await signUp(email)
    await post('/forgot-password', { email })
    const reset = linkIn(inbox.last(email), `${cloud.url}/reset-password`)

    clock.advance(HOUR - 1000)
    expect((await createHttpBrowser().request(reset)).status).toBe(200)
    clock.advance(2000)
    const expired = await createHttpBrowser().request(reset)
    expect(expired.status).toBe(400)
    expect(await expired.text()).toContain('Reset links work once and for 1 hour.')
    const token = defined(reset.searchParams.get('token'))
    const late = await post('/reset-password', {
      token,
      password: 'too late passphrase',
      confirm: 'too late passphrase',
    })
    expect(late.status).toBe(400)

    expect((await createHttpBrowser().request(verify)).status).toBe(200)
    clock.advance(23 * HOUR)
    expect((await createHttpBrowser().request(verify)).status).toBe(400)
    const verifyToken = defined(verify.searchParams.get('token'))
    expect((await post('/verify-email', { token: verifyToken })).status).toBe(400)
    expect((await cloud.app.services.directory.findByEmail(email))?.emailVerified).toBe(false)

    // Expired links are removed by the hourly cleanup.
    const account = defined(await cloud.app.services.directory.findByEmail(email))
    expect(await cloud.app.services.registration.pruneExpiredLinks()).toBeGreaterThanOrEqual(2)
    const left = await cloud.database.db
      .selectFrom('email_tokens')
      .select('purpose')
      .where('user_id', '=', account.id)
      .execute()
    expect(left).toEqual([])
  })

  it('changes the address through a link mailed to the new one, and tells the old one', async () => {
    const old = newAddress('old')
    const accountId = await cloud.addUser(old, password, 'Mover')
    const moved = newAddress('new')
    await cloud.app.services.registration.requestEmailChange(accountId, moved)
    expect(inbox.to(old)).toEqual([])
    const link = linkIn(inbox.last(moved), `${cloud.url}/confirm-email`)

    const page = await createHttpBrowser().request(link)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain(`Your Relay Cloud account will use ${moved} from now on`)
    expect((await cloud.app.services.directory.find(accountId))?.email).toBe(old)

    const changed = await follow(link)
    expect(changed.status).toBe(200)
    expect(await changed.text()).toContain(`Your account now uses ${moved}.`)
    expect(await cloud.app.services.directory.find(accountId)).toMatchObject({ email: moved, emailVerified: true })
    expect(inbox.last(old).text).toContain(`was changed to ${moved}`)
    expect((await createHttpBrowser().request(link)).status).toBe(400)
    expect((await post('/confirm-email', { token: defined(link.searchParams.get('token')) })).status).toBe(400)
  })

  it('refuses an email change whose address was taken meanwhile, and never links to a known address', async () => {
    const email = newAddress('stays')
    const accountId = await cloud.addUser(email, password)
    const wanted = newAddress('wanted')
    await cloud.app.services.registration.requestEmailChange(accountId, wanted)
    const link = linkIn(inbox.last(wanted), `${cloud.url}/confirm-email`)
    await cloud.addUser(wanted, password)

    const taken = await follow(link)
    expect(taken.status).toBe(409)
    expect(await taken.text()).toContain(`${wanted} belongs to another Relay Cloud account by now`)
    expect((await cloud.app.services.directory.find(accountId))?.email).toBe(email)

    // Asking for a known address now mails its owner a note, and the caller hears the same as ever.
    await expect(cloud.app.services.registration.requestEmailChange(accountId, wanted)).resolves.toBeUndefined()
    expect(inbox.last(wanted).subject).toBe('Relay Cloud email change')
    expect(() => linkIn(inbox.last(wanted), `${cloud.url}/confirm-email`)).toThrow()

    // Only the newest request counts.
    const first = newAddress('first')
    const second = newAddress('second')
    await cloud.app.services.registration.requestEmailChange(accountId, first)
    await cloud.app.services.registration.requestEmailChange(accountId, second)
    expect((await createHttpBrowser().request(linkIn(inbox.last(first), `${cloud.url}/confirm-email`))).status).toBe(
      400,
    )
    expect((await follow(linkIn(inbox.last(second), `${cloud.url}/confirm-email`))).status).toBe(200)
  })

  it('refuses a bad email change request', async () => {
    const email = newAddress('checks')
    const accountId = await cloud.addUser(email, password)
    const { registration } = cloud.app.services
    await expect(registration.requestEmailChange(accountId, 'not an address')).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    })
    await expect(registration.requestEmailChange(accountId, `${'x'.repeat(300)}@example.com`)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    })
    await expect(registration.requestEmailChange(accountId, email.toUpperCase())).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    })
    await expect(registration.requestEmailChange(randomUUID(), newAddress('x'))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    })
    await expect(registration.requestEmailChange('not-a-uuid', newAddress('x'))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    })
  })

  it('throttles mail to one address, the same for known and unknown addresses', async () => {
    const known = newAddress('flooded')
    await cloud.addUser(known, password)
    const unknown = newAddress('nobody')
    for (const email of [known, unknown]) {
      for (let sent = 0; sent < mailLimits.recipient.capacity; sent++) {
        expect((await post('/forgot-password', { email })).status).toBe(200)
      }
    }
    const refusals = []
    for (const email of [known, unknown]) {
      const refused = await post('/forgot-password', { email })
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      refusals.push({ status: refused.status, body: await refused.text() })
    }
    expect(refusals[0]).toEqual(refusals[1])
    expect(refusals[0]?.status).toBe(429)
    expect(refusals[0]?.body).toMatch(/Too many emails were asked for\. Try again in \d+ minutes?\./)
    expect(inbox.to(known)).toHaveLength(mailLimits.recipient.capacity)
  })

  it('answers a failed send with a page, and a sign-up can simply be tried again', async () => {
    const email = newAddress('bounce')
    inbox.refuseRecipients = true
    try {
      const failed = await post('/sign-up', { email, password })
      expect(failed.status).toBe(503)
      expect(await failed.text()).toContain('The email could not be sent')
      expect(await cloud.app.services.directory.findByEmail(email)).toBeUndefined()
    } finally {
      inbox.refuseRecipients = false
    }
    const link = await signUp(email)
    expect((await follow(link)).status).toBe(200)
  })

  it('answers bad input with a 400 page, never a 5xx', async () => {
    const pageCases: [string, string, Record<string, string>][] = [
      ['sign-up without fields', '/sign-up', {}],
      ['sign-up without a password', '/sign-up', { email: newAddress('x') }],
      ['sign-up with a short password', '/sign-up', { email: newAddress('x'), password: 'short' }],
      ['sign-up with an overlong name', '/sign-up', { email: newAddress('x'), password, name: 'n'.repeat(300) }],
      ['sign-up with an overlong address', '/sign-up', { email: `${'a'.repeat(300)}@example.com`, password }],
      ['sign-up with an overlong password', '/sign-up', { email: newAddress('x'), password: 'p'.repeat(257) }],
      ['sign-up with a NUL in the address', '/sign-up', { email: 'a\u0000@example.com', password }],
      ['resend without an address', '/sign-up/resend', {}],
      ['reset request with a bad address', '/forgot-password', { email: 'nobody' }],
      ['verification without a token', '/verify-email', {}],
      ['verification with a made-up token', '/verify-email', { token: 'A'.repeat(43) }],
      ['reset without a token', '/reset-password', { password, confirm: password }],
      ['email change without a token', '/confirm-email', {}],
    ]
    for (const [name, path, fields] of pageCases) {
      const answer = await post(path, fields)
      expect(answer.status, name).toBe(400)
      expect(answer.headers.get('content-type'), name).toMatch(/^text\/html/)
      expect(answer.headers.get('content-security-policy'), name).toContain("default-src 'none'")
    }
    for (const path of [
      '/verify-email',
      '/verify-email?token=',
      '/verify-email?token=a&token=b',
      '/reset-password?token=%00',
      '/confirm-email?token=x',
    ]) {
      const answer = await createHttpBrowser().request(url(path))
      expect(answer.status, path).toBe(400)
      expect(await answer.text(), path).toContain('This link is not valid any more')
    }

    const json = (path: string, body: string) =>
      fetch(url(path), { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    const wrongTypes = await json('/sign-up', JSON.stringify({ email: 5, name: ['x'], password: { length: 9 } }))
    expect(wrongTypes.status).toBe(400)
    expect(wrongTypes.headers.get('content-type')).toMatch(/^text\/html/)
    const malformed = await json('/forgot-password', '{"email":')
    expect(malformed.status).toBe(400)
    expect(await malformed.text()).toContain('The form was not filled in as expected')

    const huge = await post('/sign-up', { email: newAddress('x'), password, name: 'n'.repeat(10_000) })
    expect(huge.status).toBe(413)
    expect(await huge.text()).toContain('The form is too large')

    const crossSite = await fetch(url('/forgot-password'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ email: newAddress('x') }),
    })
    expect(crossSite.status).toBe(403)
    expect(await crossSite.text()).toContain('This form came from another site')
    const sameSite = await fetch(url('/forgot-password'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: cloud.url },
      body: new URLSearchParams({ email: newAddress('x') }),
    })
    expect(sameSite.status).toBe(200)

    // What is echoed back is escaped.
    const echoed = await post('/sign-up', { email: '"><script>alert(1)</script>', password })
    const text = await echoed.text()
    expect(text).not.toContain('<script>alert(1)</script>')
    expect(text).toContain('&quot;&gt;&lt;script&gt;')
    // A made-up interaction id is not echoed into a link.
    const sneaky = await createHttpBrowser().request(url('/sign-up?uid=%22%3E%3Ca%20href%3Dx'))
    expect(await sneaky.text()).not.toContain('name="uid"')
  })
})
