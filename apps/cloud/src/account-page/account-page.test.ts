import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { HOUR, MINUTE, relayClientId } from '@relay/contracts'
import { routeTable } from '@relay/server-kit'
import { createHttpBrowser, createTestClock, defined, type HttpBrowser } from '@relay/testkit'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { uploadCompletedBackup } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { databaseKinds } from '../../test/database.js'
import { linkIn, type MailInbox, startMailInbox } from '../../test/mail-inbox.js'
import {
  type CheckoutSession,
  deliverCheckoutCompleted,
  type StripeStandIn,
  startStripeStandIn,
} from '../../test/stripe-stand-in.js'
import { sessionIdOf } from '../auth/service.js'
import { grantFirstParty } from '../oauth/provider.js'
import { sessionIdOfToken } from './sessions.js'

const password = 'correct horse battery staple'
const form = 'application/x-www-form-urlencoded'

/** Posts a form as a browser does from a page of the cloud: urlencoded, with that page's origin unless told. */
function submit(
  browser: HttpBrowser,
  url: URL,
  fields: Record<string, string>,
  headers: Record<string, string> = { origin: url.origin },
) {
  return browser.request(url, {
    method: 'POST',
    headers: { 'content-type': form, ...headers },
    body: new URLSearchParams(fields).toString(),
  })
}

describe.each(databaseKinds)('account page on %s', (kind) => {
  const clock = createTestClock(new Date())
  let cloud: TestCloud
  let inbox: MailInbox
  let userCount = 0

  beforeAll(async () => {
    inbox = await startMailInbox()
    cloud = await startTestCloud(kind, { clock, env: { LOG_LEVEL: 'warn', SMTP_URL: inbox.url } })
  })

  afterAll(async () => {
    await cloud?.close()
    await inbox?.close()
  })

  type Person = { id: string; email: string }

  async function newPerson({ licensed = false, verified = true } = {}): Promise<Person> {
    userCount += 1
    const email = `person-${userCount}@example.com`
    const account = await cloud.app.services.directory.create({
      email,
      password,
      name: `Person ${userCount}`,
      verified,
    })
    if (licensed) {
      await cloud.app.services.licenses.setGifted(account.id, true)
    }
    return { id: account.id, email }
  }

  /** A browser on the account page: it keeps cookies and sends forms with the page's origin unless told. */
  function visitor(browser: HttpBrowser = createHttpBrowser()) {
    return {
      browser,
      get: (url: string) => browser.request(new URL(url, cloud.url)),
      post: (url: string, fields: Record<string, string> = {}, headers?: Record<string, string>) =>
        submit(browser, new URL(url, cloud.url), fields, headers),
      cookie: () => browser.cookies(new URL(cloud.url).host).get('relay-account'),
    }
  }
  type Visitor = ReturnType<typeof visitor>

  async function signIn(person: Person, secret = password): Promise<Visitor> {
    const page = visitor()
    const answer = await page.post('/account/sign-in', { email: person.email, password: secret })
    expect(answer.status, await answer.text()).toBe(303)
    expect(answer.headers.get('location')).toBe('/account')
    return page
  }

  async function accountText(page: Visitor): Promise<string> {
    const answer = await page.get('/account')
    expect(answer.status).toBe(200)
    return answer.text()
  }

  /** An active subscription as the payment webhooks record it. */
  function subscribe(userId: string, currentPeriodEnd: Date | null) {
    return cloud.app.services.licenses.upsertSubscription({
      userId,
      provider: 'stripe',
      customerId: `cus_${userId}`,
      subscriptionId: `sub_${userId}`,
      status: 'active',
      currentPeriodEnd,
    })
  }

  async function relayGrant(userId: string): Promise<string> {
    const provider = await cloud.app.oauth.provider()
    return sessionIdOf(await grantFirstParty(provider, userId, relayClientId, cloud.app.oauth.audience))
  }

  /** Uploads and confirms one backup for `userId` through the backup API, as a relay does. */
  const backUp = (userId: string, backendId: string) => uploadCompletedBackup(cloud, userId, backendId)

  /** Every stored object's key, read from the embedded store's folder (each file has a sidecar naming its key). */
  function storedKeys(): string[] {
    const folder = path.join(cloud.database.dataDir, 'objects')
    const sidecars = readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.json'))
    return sidecars.map((name) => (JSON.parse(readFileSync(path.join(folder, name), 'utf8')) as { key: string }).key)
  }

  /** Rows that name the user in any table with a `user_id` column, plus the user and its OAuth artifacts. */
  async function rowsNaming(userId: string): Promise<Record<string, number>> {
    const { db } = cloud.database
    const { rows: tables } = await sql<{ table_name: string }>`
      select table_name from information_schema.columns
      where column_name = 'user_id' and table_schema = current_schema()`.execute(db)
    const counts: Record<string, number> = {}
    for (const { table_name } of tables) {
      const { rows } = await sql<{ count: string }>`
        select count(*) as count from ${sql.table(table_name)} where user_id = ${userId}`.execute(db)
      counts[table_name] = Number(rows[0]?.count)
    }
    const users = await db.selectFrom('users').select('id').where('id', '=', userId).execute()
    const artifacts = await db.selectFrom('oauth_payloads').select('id').where('account_id', '=', userId).execute()
    return { ...counts, users: users.length, oauth_payloads: artifacts.length }
  }

  it('sends a signed-out browser to the sign-in page from every account route', async () => {
    const routes = routeTable(cloud.app).filter(
      (route) => route.url.startsWith('/account') && route.config.accountSession !== 'optional',
    )
    expect(routes.map((route) => `${route.method} ${route.url}`)).toEqual(
      expect.arrayContaining([
        'GET /account',
        'POST /account/name',
        'POST /account/email',
        'POST /account/password',
        'POST /account/upgrade',
        'POST /account/subscription',
        'POST /account/relay-sessions/:id/revoke',
        'POST /account/browser-sessions/:id/revoke',
        'GET /account/backups/:id/download',
        'POST /account/delete',
        'POST /account/sign-out',
      ]),
    )
    const person = await newPerson()
    const forged = sessionIdOfToken('not a token')
    for (const cookie of [undefined, 'relay-account=forged', `relay-account=${'a'.repeat(43)}`]) {
      for (const route of routes) {
        const url = route.url.replace(':id', forged)
        const answer = await fetch(new URL(url, cloud.url), {
          method: route.method,
          redirect: 'manual',
          headers: {
            origin: cloud.url,
            'content-type': form,
            ...(cookie ? { cookie } : {}),
          },
          ...(route.method === 'POST' ? { body: new URLSearchParams({ password, name: 'x' }).toString() } : {}),
        })
        expect(answer.status, `${route.method} ${url} with ${cookie}`).toBe(303)
        expect(answer.headers.get('location')).toBe('/account/sign-in')
      }
    }
    // Nothing reached a handler: the person's name and account are as they were.
    expect((await cloud.app.services.directory.find(person.id))?.name).toBe(`Person ${userCount}`)
  })

  it('refuses forms sent from another origin or without one, signed in or not', async () => {
    const person = await newPerson()
    const page = await signIn(person)
    const origins: Record<string, string>[] = [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      {},
      { origin: `${cloud.url}.evil` },
    ]
    for (const headers of origins) {
      for (const url of ['/account/name', '/account/delete', '/account/sign-out', '/account/sign-in']) {
        const answer = await page.post(url, { name: 'Mallory', password, email: person.email }, headers)
        expect(answer.status, `${url} ${JSON.stringify(headers)}`).toBe(403)
        expect(answer.headers.get('content-type')).toMatch(/^text\/html/)
        expect(await answer.text()).toContain('This form was refused')
      }
    }
    expect((await cloud.app.services.directory.find(person.id))?.name).not.toBe('Mallory')
    expect((await page.get('/account')).status).toBe(200)
  })

  it('signs in with a hashed session in an HttpOnly cookie whose expiry slides, and signs out', async () => {
    const person = await newPerson()
    const page = visitor()
    const signInPage = await page.get('/account/sign-in')
    expect(signInPage.status).toBe(200)
    expect(signInPage.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await signInPage.text()
    expect(html).toContain('href="/forgot-password"')
    expect(html).toContain('href="/sign-up"')

    const answer = await page.post('/account/sign-in', { email: person.email.toUpperCase(), password })
    expect(answer.status).toBe(303)
    const cookie = defined(answer.headers.getSetCookie()[0])
    expect(cookie).toMatch(/^relay-account=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax$/)
    const token = defined(page.cookie())
    const rows = await cloud.database.db
      .selectFrom('account_sessions')
      .selectAll()
      .where('user_id', '=', person.id)
      .execute()
    expect(rows.map((row) => row.id)).toEqual([sessionIdOfToken(token)])
    expect(JSON.stringify(rows)).not.toContain(token)

    // 12 hours without use end it; every use starts them again.
    clock.advance(11 * HOUR)
    expect(await accountText(page)).toContain(person.email)
    clock.advance(11 * HOUR)
    expect(await accountText(page)).toContain(person.email)
    clock.advance(12 * HOUR + MINUTE)
    const lapsed = await page.get('/account')
    expect(lapsed.status).toBe(303)
    expect(lapsed.headers.get('location')).toBe('/account/sign-in')

    const again = await signIn(person)
    expect((await again.get('/account/sign-in')).headers.get('location')).toBe('/account')
    const out = await again.post('/account/sign-out')
    expect(out.status).toBe(303)
    expect(out.headers.get('location')).toBe('/account/sign-in')
    expect(out.headers.getSetCookie()[0]).toContain('Max-Age=0')
    expect(again.cookie()).toBeUndefined()
    const live = await cloud.database.db
      .selectFrom('account_sessions')
      .select('id')
      .where('user_id', '=', person.id)
      .where('expires_at', '>', clock.now())
      .execute()
    expect(live).toEqual([])
  })

  it('uses a Secure __Host- cookie when the public address is HTTPS', async () => {
    const person = await newPerson()
    const secure = await startTestCloud(kind, {
      clock,
      database: cloud.database,
      env: { LOG_LEVEL: 'warn', CLOUD_PUBLIC_URL: 'https://cloud.example' },
    })
    try {
      const answer = await fetch(`${secure.url}/account/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': form, origin: 'https://cloud.example' },
        body: new URLSearchParams({ email: person.email, password }).toString(),
      })
      expect(answer.status).toBe(303)
      expect(answer.headers.getSetCookie()[0]).toMatch(
        /^__Host-relay-account=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
      )
      const fromHttpOrigin = await fetch(`${secure.url}/account/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': form, origin: secure.url },
        body: new URLSearchParams({ email: person.email, password }).toString(),
      })
      expect(fromHttpOrigin.status).toBe(403)
    } finally {
      await secure.close()
    }
  })

  it('refuses a wrong password and an unconfirmed address, and throttles guessing', async () => {
    const person = await newPerson()
    const unconfirmed = await newPerson({ verified: false })
    const page = visitor()
    const wrong = await page.post('/account/sign-in', { email: person.email, password: 'not the password' })
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toContain('The email or password is not correct.')
    expect(page.cookie()).toBeUndefined()

    const refused = await page.post('/account/sign-in', { email: unconfirmed.email, password })
    expect(refused.status).toBe(403)
    expect(await refused.text()).toContain(`Confirm your email address first: we sent a link to ${unconfirmed.email}`)
    expect(page.cookie()).toBeUndefined()

    for (let attempt = 0; attempt < 4; attempt++) {
      expect((await page.post('/account/sign-in', { email: person.email, password: 'guess' })).status).toBe(401)
    }
    const throttled = await page.post('/account/sign-in', { email: person.email, password })
    expect(throttled.status).toBe(429)
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await throttled.text()).toContain('Too many attempts with a wrong password. Try again in')
    // The buckets refill; later tests sign in from the same address.
    clock.advance(HOUR)
    await signIn(person)
  })

  it('answers missing, oversized, repeated and foreign input with 4xx pages', async () => {
    const person = await newPerson()
    const page = await signIn(person)
    const cases: Array<[string, string, number, string]> = [
      ['/account/sign-in', 'email=', 400, 'Enter your email and password.'],
      ['/account/sign-in', `email=${'a'.repeat(300)}%40example.com&password=x`, 400, 'too long'],
      ['/account/name', '', 400, 'Enter the name you want to be shown.'],
      ['/account/name', 'name=%20%20', 400, 'Enter the name you want to be shown.'],
      ['/account/name', `name=${'n'.repeat(256)}`, 400, 'at most 255 characters'],
      ['/account/name', 'name=a&name=b', 400, 'Enter the name you want to be shown.'],
      ['/account/name', 'name=a%00b', 400, 'cannot contain control characters'],
      ['/account/email', `email=new%40example.com`, 400, 'Enter your current password to confirm the change.'],
      ['/account/email', `email=not-an-address&password=${password}`, 400, 'Enter a valid email address'],
      ['/account/email', `email=${person.email}&password=${password}`, 400, 'That is already your email address.'],
      ['/account/password', `current=${password}&password=short&repeat=short`, 400, 'Choose a new password of 8'],
      [
        '/account/password',
        `current=${password}&password=long+enough+one&repeat=long+enough+two`,
        400,
        'The new password and its repetition differ.',
      ],
      ['/account/password', `current=x&password=${'p'.repeat(300)}&repeat=p`, 400, 'at most 256 characters'],
      ['/account/delete', '', 400, 'Enter your password to confirm'],
    ]
    for (const [url, body, status, message] of cases) {
      const answer = await page.browser.request(new URL(url, cloud.url), {
        method: 'POST',
        headers: { 'content-type': form, origin: cloud.url },
        body,
      })
      expect(answer.status, `${url} ${body}`).toBe(status)
      expect(answer.headers.get('content-type')).toMatch(/^text\/html/)
      expect(await answer.text(), `${url} ${body}`).toContain(message)
    }
    const json = await page.browser.request(new URL('/account/name', cloud.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: cloud.url },
      body: JSON.stringify({ name: ['not', 'a', 'string'] }),
    })
    expect(json.status).toBe(415)
    expect(await json.text()).toContain('accepts only the forms of the account page')
    const huge = await page.post('/account/name', { name: 'n'.repeat(9000) })
    expect(huge.status).toBe(413)
    expect(await huge.text()).toContain('The form was too large.')
    expect((await cloud.app.services.directory.find(person.id))?.name).toBe(`Person ${userCount}`)
  })

  it('shows the profile, escapes it, and changes the name', async () => {
    const person = await newPerson()
    const page = await signIn(person)
    const before = await accountText(page)
    expect(before).toContain('Your account')
    expect(before).toContain(person.email)
    expect(before).toContain('verified')

    const answer = await page.post('/account/name', { name: '  <b>Ada</b> & "Lovelace"  ' })
    expect(answer.status).toBe(303)
    expect(answer.headers.get('location')).toBe('/account?done=name')
    const after = await (await page.get('/account?done=name')).text()
    expect(after).toContain('Your name was saved.')
    expect(after).toContain('&lt;b&gt;Ada&lt;/b&gt; &amp; &quot;Lovelace&quot;')
    expect(after).not.toContain('<b>Ada</b>')
    expect((await cloud.app.services.directory.find(person.id))?.name).toBe('<b>Ada</b> & "Lovelace"')
    // Only known notices are shown: the query string cannot put text on the page.
    expect(await (await page.get('/account?done=<script>')).text()).not.toContain('script&gt;')
  })

  it('changes the password: every relay and every other browser is signed out, this one stays', async () => {
    const person = await newPerson()
    const page = await signIn(person)
    const other = await signIn(person)
    const relaySession = await relayGrant(person.id)
    expect(await accountText(page)).toContain(`/account/relay-sessions/${relaySession}/revoke`)

    const wrong = await page.post('/account/password', {
      current: 'not it at all',
      password: 'a new password',
      repeat: 'a new password',
    })
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toContain('Your current password is not correct.')

    const changed = await page.post('/account/password', {
      current: password,
      password: 'a new password',
      repeat: 'a new password',
    })
    expect(changed.status).toBe(303)
    expect(changed.headers.get('location')).toBe('/account?done=password')
    const text = await (await page.get('/account?done=password')).text()
    expect(text).toContain('Your password was changed.')
    expect(text).not.toContain(relaySession)
    expect((await other.get('/account')).status).toBe(303)
    await signIn(person, 'a new password')
    expect((await visitor().post('/account/sign-in', { email: person.email, password })).status).toBe(401)
  })

  it('signs every browser out when the password is reset from a mailed link', async () => {
    const person = await newPerson()
    const page = await signIn(person)
    await cloud.app.services.registration.requestPasswordReset(person.email, { ip: '127.0.0.1' })
    const token = linkIn(inbox.last(person.email), `${cloud.url}/reset-password`).searchParams.get('token')
    expect(await cloud.app.services.registration.resetPassword(token ?? '', 'a reset password')).toBe(true)
    expect((await page.get('/account')).status).toBe(303)
  })

  it('mails a confirmation link to a new address', async () => {
    const person = await newPerson()
    const page = await signIn(person)
    const newAddress = `moved-${userCount}@example.com`
    const answer = await page.post('/account/email', { email: newAddress, password })
    expect(answer.status).toBe(303)
    expect(answer.headers.get('location')).toBe('/account?done=email')
    expect(await (await page.get('/account?done=email')).text()).toContain('We sent a confirmation link')
    expect(inbox.last(newAddress).text).toContain('/confirm-email')
    // The address changes only when the link is followed.
    expect((await cloud.app.services.directory.find(person.id))?.email).toBe(person.email)

    const wrong = await page.post('/account/email', { email: `other-${userCount}@example.com`, password: 'nope nope' })
    expect(wrong.status).toBe(401)
    expect(inbox.to(`other-${userCount}@example.com`)).toEqual([])
  })

  it('shows how the license was granted, and says billing is not configured here', async () => {
    const none = await newPerson()
    const page = await signIn(none)
    const text = await accountText(page)
    expect(text).toContain('You have no Pro license.')
    expect(text).toContain('Billing is not configured on this cloud.')
    expect(text).toContain('npm run cloud -- users gift')
    expect(text).not.toContain('Upgrade to Pro')
    const upgrade = await page.post('/account/upgrade')
    expect(upgrade.status).toBe(409)
    expect(await upgrade.text()).toContain('Billing is not configured on this cloud.')
    const manage = await page.post('/account/subscription')
    expect(manage.status).toBe(409)

    await cloud.app.services.licenses.setGifted(none.id, true)
    expect(await accountText(page)).toContain('granted by an operator of this cloud')

    const subscriber = await newPerson()
    await subscribe(subscriber.id, new Date('2031-03-04T05:06:07Z'))
    const subscribed = await accountText(await signIn(subscriber))
    expect(subscribed).toContain('through your subscription')
    expect(subscribed).toContain('It renews on <time datetime="2031-03-04T05:06:07.000Z">4 March 2031</time>')
  })

  it("signs out a relay or a browser of the person's own, and answers 404 for anyone else's", async () => {
    const person = await newPerson()
    const stranger = await newPerson()
    const page = await signIn(person)
    const otherBrowser = await signIn(person)
    const strangersPage = await signIn(stranger)
    const own = await relayGrant(person.id)
    const theirs = await relayGrant(stranger.id)
    const strangersBrowser = sessionIdOfToken(defined(strangersPage.cookie()))

    for (const url of [
      `/account/relay-sessions/${theirs}/revoke`,
      `/account/relay-sessions/${'0'.repeat(64)}/revoke`,
      '/account/relay-sessions/not-a-session/revoke',
      `/account/browser-sessions/${strangersBrowser}/revoke`,
      '/account/browser-sessions/not-a-session/revoke',
    ]) {
      const answer = await page.post(url)
      expect(answer.status, url).toBe(404)
      expect(answer.headers.get('content-type')).toMatch(/^text\/html/)
    }
    expect((await strangersPage.get('/account')).status).toBe(200)
    const strangers = await accountText(strangersPage)
    expect(strangers).toContain(`/account/relay-sessions/${theirs}/revoke`)

    const current = sessionIdOfToken(defined(page.cookie()))
    const self = await page.post(`/account/browser-sessions/${current}/revoke`)
    expect(self.status).toBe(409)
    expect(await self.text()).toContain('use the Sign out button')

    const relay = await page.post(`/account/relay-sessions/${own}/revoke`)
    expect(relay.status).toBe(303)
    expect(relay.headers.get('location')).toBe('/account?done=relay')
    const text = await accountText(page)
    expect(text).not.toContain(own)
    expect(text).toContain('No relay is signed in.')

    const browser = await page.post(
      `/account/browser-sessions/${sessionIdOfToken(defined(otherBrowser.cookie()))}/revoke`,
    )
    expect(browser.status).toBe(303)
    expect((await otherBrowser.get('/account')).status).toBe(303)
    expect((await page.get('/account')).status).toBe(200)
  })

  it("lists and downloads the person's completed backups, and answers 404 for anyone else's", async () => {
    const person = await newPerson({ licensed: true })
    const stranger = await newPerson({ licensed: true })
    const page = await signIn(person)
    expect(await accountText(page)).toContain('You have no backups yet.')

    const first = await backUp(person.id, `relay-a-${userCount}`)
    const second = await backUp(person.id, `relay-b-${userCount}`)
    const theirs = await backUp(stranger.id, `relay-c-${userCount}`)
    // Downloads stay open after the license ends: the backups are the person's data.
    await cloud.app.services.licenses.setGifted(person.id, false)

    const text = await accountText(page)
    expect(text).toContain(`/account/backups/${first.id}/download`)
    expect(text).toContain(`/account/backups/${second.id}/download`)
    expect(text).not.toContain(theirs.id)
    expect(text).toContain(`relay-a-${userCount}`)
    expect(text).toMatch(/You use 5\.9 KB of 500 MB and 2 backups of 500\./)

    const download = await page.get(`/account/backups/${first.id}/download`)
    expect(download.status).toBe(303)
    const file = await fetch(defined(download.headers.get('location')))
    expect(file.status).toBe(200)
    expect(Buffer.from(await file.arrayBuffer()).equals(first.file)).toBe(true)

    for (const id of [theirs.id, '6f1c0a52-5b8e-4f8e-9d55-0c1f3e6a9b10', 'not-a-backup']) {
      const answer = await page.get(`/account/backups/${id}/download`)
      expect(answer.status, id).toBe(404)
      expect(await answer.text()).toContain('There is no such backup in your account.')
    }
  })

  it('deletes the account with its backups, files, sessions and license, and signs the browser out', async () => {
    const person = await newPerson({ licensed: true })
    const page = await signIn(person)
    const backup = await backUp(person.id, `relay-gone-${userCount}`)
    const relaySession = await relayGrant(person.id)
    await subscribe(person.id, null)
    // A pending email change too, so its token row is there to be removed.
    expect((await page.post('/account/email', { email: `leaving-${userCount}@example.com`, password })).status).toBe(
      303,
    )
    expect(storedKeys()).toContain(backup.key)
    expect(Object.values(await rowsNaming(person.id)).some((count) => count > 0)).toBe(true)

    const wrong = await page.post('/account/delete', { password: 'not my password' })
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toContain('Your current password is not correct.')
    expect(await cloud.app.services.directory.find(person.id)).toBeDefined()
    expect(storedKeys()).toContain(backup.key)

    const deleted = await page.post('/account/delete', { password })
    expect(deleted.status).toBe(200)
    expect(await deleted.text()).toContain('Your account was deleted')
    expect(deleted.headers.getSetCookie()[0]).toContain('Max-Age=0')

    const left = await rowsNaming(person.id)
    expect(Object.entries(left).filter(([, count]) => count > 0)).toEqual([])
    expect(storedKeys().filter((key) => key.includes(person.id))).toEqual([])
    expect(await cloud.app.services.backups.store.head(backup.key)).toBeUndefined()
    expect(await cloud.app.services.licenses.check(person.id)).toEqual({ valid: false, source: null })
    expect(
      await cloud.database.db.selectFrom('oauth_payloads').select('id').where('grant_id', '=', relaySession).execute(),
    ).toEqual([])
    expect((await page.get('/account')).status).toBe(303)
    expect((await visitor().post('/account/sign-in', { email: person.email, password })).status).toBe(401)
  })
})

describe.each(databaseKinds)('account page with Stripe billing on %s', (kind) => {
  const secretKey = 'sk_test_account_page'
  const priceId = 'price_account_page'
  const webhookSecret = 'whsec_account_page'
  let stripe: StripeStandIn
  let cloud: TestCloud

  beforeAll(async () => {
    stripe = await startStripeStandIn({ secretKey, priceId })
    cloud = await startTestCloud(kind, {
      env: {
        LOG_LEVEL: 'warn',
        STRIPE_SECRET_KEY: secretKey,
        STRIPE_PRICE_ID: priceId,
        STRIPE_WEBHOOK_SECRET: webhookSecret,
        STRIPE_API_URL: stripe.url,
      },
    })
  })

  afterAll(async () => {
    await cloud?.close()
    await stripe?.close()
  })

  const post = (browser: HttpBrowser, url: string, fields: Record<string, string> = {}) =>
    submit(browser, new URL(url, cloud.url), fields)

  async function pageText(browser: HttpBrowser): Promise<string> {
    const answer = await browser.request(new URL('/account', cloud.url))
    expect(answer.status).toBe(200)
    return answer.text()
  }

  /** Stripe tells the cloud that the Checkout was paid, as its webhook does. */
  async function deliverCompleted(session: CheckoutSession) {
    expect((await deliverCheckoutCompleted(cloud.url, webhookSecret, session)).status).toBe(200)
  }

  it('upgrades through Checkout, manages the subscription in the portal, and ends it with the account', async () => {
    const email = `buyer-${kind}@example.com`
    const userId = await cloud.addUser(email, password, 'Buyer')
    const browser = createHttpBrowser()
    expect((await post(browser, '/account/sign-in', { email, password })).status).toBe(303)
    const before = await pageText(browser)
    expect(before).toContain('Upgrade to Pro')
    expect(before).not.toContain('Billing is not configured')

    const upgrade = await post(browser, '/account/upgrade')
    expect(upgrade.status).toBe(303)
    const checkoutUrl = defined(upgrade.headers.get('location'))
    const session = defined([...stripe.sessions.values()].find((s) => s.client_reference_id === userId))
    expect(checkoutUrl).toBe(session.url)
    expect(session).toMatchObject({
      success_url: `${cloud.url}/account?done=upgraded`,
      cancel_url: `${cloud.url}/account`,
      customer_email: email,
    })

    await deliverCompleted(stripe.complete(session.id, { periodEnd: Date.UTC(2031, 0, 2) / 1000 }))
    const upgraded = await (await browser.request(new URL('/account?done=upgraded', cloud.url))).text()
    expect(upgraded).toContain('Your Pro license starts as soon as the payment is confirmed')
    expect(upgraded).toContain('through your subscription')
    expect(upgraded).toContain('It renews on <time datetime="2031-01-02T00:00:00.000Z">2 January 2031</time>')
    expect(upgraded).toContain('Manage subscription')

    const manage = await post(browser, '/account/subscription')
    expect(manage.status).toBe(303)
    expect(manage.headers.get('location')).toMatch(/^https:\/\/billing\.stripe\.test\/p\/session\//)
    const portal = stripe.requests.filter((request) => request.path === '/v1/billing_portal/sessions').at(-1)
    expect(portal?.params.return_url).toBe(`${cloud.url}/account`)

    const customer = defined(stripe.sessions.get(session.id)?.customer)
    const deleted = await post(browser, '/account/delete', { password })
    expect(deleted.status).toBe(200)
    expect(stripe.customers.get(customer)?.deleted).toBe(true)
    expect([...stripe.subscriptions.values()].filter((sub) => sub.customer === customer)).toMatchObject([
      { status: 'canceled' },
    ])
    expect(await cloud.app.services.directory.find(userId)).toBeUndefined()
  })

  it('says so when Stripe cannot be reached, and deletes nothing then', async () => {
    const email = `unlucky-${kind}@example.com`
    const userId = await cloud.addUser(email, password, 'Unlucky')
    const browser = createHttpBrowser()
    expect((await post(browser, '/account/sign-in', { email, password })).status).toBe(303)
    const other = createHttpBrowser()
    expect((await post(other, '/account/sign-in', { email, password })).status).toBe(303)
    const portal = await post(browser, '/account/subscription')
    expect(portal.status).toBe(409)
    expect(await portal.text()).toContain('You have no subscription to manage yet.')

    const session = await cloud.app.services.payments.billing.checkout(
      { id: userId, email },
      { success: `${cloud.url}/account`, cancel: `${cloud.url}/account` },
    )
    await deliverCompleted(stripe.complete(defined(session.split('/').at(-1))))
    stripe.failing = true
    try {
      const manage = await post(browser, '/account/subscription')
      expect(manage.status).toBe(503)
      expect(await manage.text()).toContain('Stripe could not open the customer portal just now')
      const deleted = await post(browser, '/account/delete', { password })
      expect(deleted.status).toBe(503)
      expect(await deleted.text()).toContain('Stripe could not cancel the subscription just now')
    } finally {
      stripe.failing = false
    }
    expect(await cloud.app.services.directory.find(userId)).toBeDefined()
    expect((await other.request(new URL('/account', cloud.url))).status).toBe(200)
  })
})
