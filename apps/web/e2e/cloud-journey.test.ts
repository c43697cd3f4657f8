import { readdirSync } from 'node:fs'
import path from 'node:path'
import { chromiumProblem, defined, launchChromium, requirement } from '@relay/testkit'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { embeddedObjectsDir } from '../../cloud/src/storage/create-object-store.js'
import { startTestCloud, type TestCloud } from '../../cloud/test/cloud-server.js'
import { linkIn, type MailInbox, startMailInbox } from '../../cloud/test/mail-inbox.js'
import {
  type CheckoutSession,
  deliverCheckoutCompleted,
  type StripeStandIn,
  startStripeStandIn,
} from '../../cloud/test/stripe-stand-in.js'
import { backOnBackups, relayBackups } from './backups-page'
import { password } from './cloud-sign-in'
import { type RelayUnderTest, startRelay } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

const stripeKeys = { secretKey: 'sk_test_journey', priceId: 'price_relay_pro', webhookSecret: 'whsec_journey' }
/** Where the stand-in's Checkout URLs point: the browser is shown a page of the test's own there. */
const checkoutOrigin = 'https://checkout.stripe.test'
/** The end of the paid period Stripe reports, and how the account page writes it. */
const periodEnd = Date.UTC(2031, 4, 20, 12) / 1000
const renewalDate = '20 May 2031'

describe.skipIf(!chromium.available)('Relay Cloud from sign-up to account deletion, in Chromium', () => {
  let inbox: MailInbox
  let stripe: StripeStandIn
  let cloud: TestCloud
  let relay: RelayUnderTest
  let browser: Browser
  let context: BrowserContext

  beforeAll(async () => {
    inbox = await startMailInbox()
    stripe = await startStripeStandIn(stripeKeys)
    cloud = await startTestCloud('pglite', {
      env: {
        LOG_LEVEL: 'warn',
        SMTP_URL: inbox.url,
        STRIPE_SECRET_KEY: stripeKeys.secretKey,
        STRIPE_PRICE_ID: stripeKeys.priceId,
        STRIPE_API_URL: stripe.url,
        STRIPE_WEBHOOK_SECRET: stripeKeys.webhookSecret,
      },
    })
    relay = await startRelay({ env: { CLOUD_URL: cloud.url } })
    browser = await launchChromium()
    context = await browser.newContext()
    // Stripe's hosted Checkout, as far as the browser goes: a page that says where it is.
    await context.route(`${checkoutOrigin}/**`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: '<!doctype html><title>Checkout</title><h1>Pay for Relay Pro</h1>',
      }),
    )
  })

  afterAll(async () => {
    await context?.close()
    await browser?.close()
    await relay?.close()
    await cloud?.close()
    await stripe?.close()
    await inbox?.close()
  })

  /** Stripe tells the cloud that the Checkout was paid: the event, signed with the webhook secret. */
  async function deliverPaidCheckout(session: CheckoutSession) {
    const response = await deliverCheckoutCompleted(cloud.url, stripeKeys.webhookSecret, session)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ received: true })
  }

  /** Every file in the embedded object store's folder: the objects, what is kept beside them, the store's id. */
  function storedFiles(): string[] {
    const folder = embeddedObjectsDir({ dataDir: cloud.database.dataDir })
    return readdirSync(folder, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name))
  }

  const notice = (page: Page) => page.getByRole('status')

  it('signs up from the relay, confirms by mail, buys Pro, backs up, then deletes the account with its backups', async () => {
    const email = 'journey@example.com'
    const relayPage = await context.newPage()

    // 1. Someone without an account opens the relay's Backups page, connects, and signs up at the cloud.
    await relayPage.goto(`${relay.baseUrl}/backups`)
    const notConnected = relayPage.getByTestId('backups-not-connected')
    await notConnected.getByRole('heading', { name: 'Connect the relay to Relay Cloud' }).waitFor()
    await notConnected.getByRole('button', { name: 'Connect to cloud' }).click()
    await relayPage.waitForURL((url) => url.origin === cloud.url && url.pathname.startsWith('/interaction/'))
    await relayPage.getByRole('link', { name: 'Create an account' }).click()
    await relayPage.getByRole('heading', { level: 1, name: 'Create a Relay Cloud account' }).waitFor()
    await relayPage.getByLabel('Email').fill(email)
    await relayPage.getByLabel('Name (optional)').fill('Ada Lovelace')
    await relayPage.getByLabel('Password').fill(password)
    await relayPage.getByRole('button', { name: 'Create account' }).click()
    await relayPage.getByRole('heading', { level: 1, name: 'Check your email' }).waitFor()
    expect(await notice(relayPage).textContent()).toBe(`We sent an email to ${email}.`)
    expect(await cloud.app.services.directory.findByEmail(email)).toMatchObject({ emailVerified: false })

    // 2. The confirmation mail arrives; its link, opened in the same browser, confirms the address and
    //    leads back to the relay's sign-in, which ends on the relay's Backups page.
    await expect.poll(() => inbox.to(email).length).toBe(1)
    const mail = inbox.last(email)
    expect(mail.subject).toBe('Confirm your email address for Relay Cloud')
    await relayPage.goto(linkIn(mail, `${cloud.url}/verify-email`).href)
    await relayPage.getByRole('button', { name: 'Confirm my email address' }).click()
    await relayPage.getByRole('heading', { level: 1, name: 'Your email is verified' }).waitFor()
    expect(await notice(relayPage).textContent()).toBe(`${email} is confirmed. Your account is ready.`)
    await relayPage.getByRole('link', { name: 'Continue signing in to your relay' }).click()
    await relayPage.getByRole('heading', { level: 1, name: 'Sign in to Relay Cloud' }).waitFor()
    await relayPage.getByLabel('Email').fill(email)
    await relayPage.getByLabel('Password').fill(password)
    await relayPage.getByRole('button', { name: 'Sign in' }).click()
    await backOnBackups(relayPage, relay)
    const proGate = relayPage.getByTestId('backups-pro-gate')
    await proGate.getByRole('heading', { name: 'Cloud backups need a Pro license' }).waitFor()
    expect(await proGate.textContent()).toContain(`The Relay Cloud account this relay is connected to, ${email}`)
    const user = defined(await cloud.app.services.directory.findByEmail(email))
    expect(user).toMatchObject({ name: 'Ada Lovelace', emailVerified: true })

    // 3. The gate's link opens the cloud's account page in another tab: they sign in, upgrade, and pay at Checkout.
    const opened = context.waitForEvent('page')
    await proGate.getByRole('link', { name: 'Get Pro on Relay Cloud' }).click()
    const accountPage = await opened
    await accountPage.waitForURL(`${cloud.url}/account/sign-in`)
    await accountPage.getByLabel('Email').fill(email)
    await accountPage.getByLabel('Password').fill(password)
    await accountPage.getByRole('button', { name: 'Sign in' }).click()
    await accountPage.getByRole('heading', { level: 1, name: 'Your account' }).waitFor()
    const license = accountPage.getByRole('region', { name: 'Pro license' })
    expect(await license.getByText('You have no Pro license. Cloud backups need one.').count()).toBe(1)
    await license.getByRole('button', { name: 'Upgrade to Pro' }).click()
    await accountPage.waitForURL((url) => url.origin === checkoutOrigin)
    await accountPage.getByRole('heading', { name: 'Pay for Relay Pro' }).waitFor()
    const sessionId = defined(new URL(accountPage.url()).pathname.split('/').at(-1))
    expect(stripe.sessions.get(sessionId)).toMatchObject({
      status: 'open',
      client_reference_id: user.id,
      customer_email: email,
    })
    // The customer pays; Stripe reports it to the cloud and sends the browser back to the success URL.
    const paid = stripe.complete(sessionId, { periodEnd })
    await deliverPaidCheckout(paid)
    await accountPage.goto(paid.success_url)
    await accountPage.waitForURL(`${cloud.url}/account?done=upgraded`)
    expect(await notice(accountPage).textContent()).toContain('Thank you.')
    expect(await license.textContent()).toContain(
      `You have a Pro license through your subscription. It renews on ${renewalDate}.`,
    )
    expect(await license.getByRole('button', { name: 'Manage subscription' }).count()).toBe(1)
    expect(await license.getByRole('button', { name: 'Upgrade to Pro' }).count()).toBe(0)

    // 4. The relay's Backups page, asked again, has the license; a backup made now is listed.
    await proGate.getByRole('button', { name: 'Check again' }).click()
    await relayPage.getByTestId('backup-settings').waitFor()
    expect(await relayPage.getByTestId('backups-pro-gate').count()).toBe(0)
    await relayPage.getByTestId('backups-empty').waitFor()
    const filesBefore = storedFiles()
    await relayPage.getByRole('button', { name: 'Back up now' }).click()
    const activity = relayPage.getByTestId('backup-activity')
    await expect.poll(() => activity.getAttribute('data-stage'), { timeout: 30_000 }).toBe('done')
    expect(await activity.textContent()).toContain('Backup complete')
    const rows = relayPage.getByTestId('backup-row')
    await expect.poll(() => rows.count()).toBe(1)
    expect(await rows.first().getByTestId('backup-status').textContent()).toBe('Completed')
    const [listed] = await relayBackups(relay)
    expect(await rows.first().getAttribute('data-id')).toBe(listed?.id)
    const stored = await cloud.database.db
      .selectFrom('backups')
      .select(['id', 's3_key'])
      .where('user_id', '=', user.id)
      .execute()
    expect(stored).toEqual([{ id: listed?.id, s3_key: expect.any(String) }])
    const objectKey = defined(stored[0]).s3_key
    expect(await cloud.app.services.backups.store.head(objectKey)).toMatchObject({ size: listed?.compressedSize })
    expect(storedFiles().length).toBeGreaterThan(filesBefore.length)

    // 5. On the account page they delete the account with their password: its backup's file and its
    //    row go with it, and the relay is no longer connected.
    await accountPage.goto(`${cloud.url}/account`)
    const backupsSection = accountPage.getByRole('region', { name: 'Backups' })
    expect(await backupsSection.getByRole('link', { name: `Download ${listed?.filename}` }).count()).toBe(1)
    await accountPage.getByLabel('Your password, to confirm').fill(password)
    await accountPage.getByRole('button', { name: 'Delete my account' }).click()
    await accountPage.getByRole('heading', { level: 1, name: 'Your account was deleted' }).waitFor()
    expect(await cloud.app.services.backups.store.head(objectKey)).toBeUndefined()
    expect(storedFiles()).toEqual(filesBefore)
    const userRows = await cloud.database.db.selectFrom('users').select('id').where('id', '=', user.id).execute()
    expect(userRows).toEqual([])
    expect(await cloud.database.db.selectFrom('backups').select('id').execute()).toEqual([])
    // Its Stripe customer was deleted, which ends the subscription.
    expect(stripe.subscriptions.get(paid.subscription ?? '')?.status).toBe('canceled')

    // The relay's next call meets a refused sign-in: it forgets the session and asks to be connected again.
    await relayPage.reload()
    const connectAgain = relayPage.getByTestId('backups-not-connected')
    await connectAgain.getByRole('heading', { name: 'Connect the relay to Relay Cloud' }).waitFor()
    expect(await connectAgain.textContent()).toContain('It is not connected to a cloud account.')
    expect(await connectAgain.getByRole('button', { name: 'Connect to cloud' }).count()).toBe(1)
    expect(await relayPage.getByRole('button', { name: 'Back up now' }).count()).toBe(0)
    expect(await relay.authStatus()).toMatchObject({ backendAuthenticated: false, cloud: null })
  })
})
