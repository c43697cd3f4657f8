import { relayClientId, relayScope } from '@relay/contracts'
import { checkPageEverywhere, chromiumProblem, type LayoutProblem, launchChromium, requirement } from '@relay/testkit'
import * as client from 'openid-client'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { linkIn, type MailInbox, startMailInbox } from '../../test/mail-inbox.js'

const chromium = requirement('Chromium', chromiumProblem())
const callback = 'http://127.0.0.1:53682/api/unified-auth/cloud/callback'
const password = 'correct horse battery staple'
const email = 'chromium-reader@example.com'
/** Four axe runs per page (two widths, light and dark) take a few seconds each on a busy machine. */
const timeout = 90_000

describe.skipIf(!chromium.available)(
  'registration pages in Chromium at phone and desktop width, light and dark',
  () => {
    let inbox: MailInbox
    let cloud: TestCloud
    let browser: Browser
    let page: Page
    let uid: string
    const problems: LayoutProblem[] = []

    beforeAll(async () => {
      inbox = await startMailInbox()
      cloud = await startTestCloud('pglite', { env: { SMTP_URL: inbox.url } })
      browser = await launchChromium()
      // The pages allow no script at all; axe is injected past their policy.
      page = await (await browser.newContext({ bypassCSP: true })).newPage()
    })

    afterAll(async () => {
      await browser?.close()
      await cloud?.close()
      await inbox?.close()
    })

    /** Checks the page now open, and notes what is wrong rather than stopping at the first page. */
    async function check(heading: string) {
      await page.getByRole('heading', { level: 1, name: heading }).waitFor()
      problems.push(...(await checkPageEverywhere(page)))
    }

    it('signs up from the relay sign-in page and confirms the address', { timeout }, async () => {
      const relay = await client.discovery(new URL(`${cloud.url}/oauth`), relayClientId, undefined, client.None(), {
        execute: [client.allowInsecureRequests],
      })
      const authorization = client.buildAuthorizationUrl(relay, {
        redirect_uri: callback,
        scope: relayScope,
        code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
        state: client.randomState(),
      })
      await page.goto(authorization.href)
      uid = new URL(page.url()).pathname.split('/')[2] ?? ''
      await check('Sign in to Relay Cloud')

      await page.getByRole('link', { name: 'Create an account' }).click()
      await check('Create a Relay Cloud account')
      await page.getByLabel('Email').fill(email)
      await page.getByLabel('Name (optional)').fill('Reader')
      await page.getByLabel('Password').fill(password)
      await page.getByRole('button', { name: 'Create account' }).click()
      await check('Check your email')

      await page.goto(`${cloud.url}/interaction/${uid}`)
      await page.getByLabel('Email').fill(email)
      await page.getByLabel('Password').fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByText('Confirm your email address first').waitFor()
      await check('Sign in to Relay Cloud')

      await page.goto(linkIn(inbox.last(email), `${cloud.url}/verify-email`).href)
      await check('Confirm your email address')
      await page.getByRole('button', { name: 'Confirm my email address' }).click()
      await check('Your email is verified')
      await page.getByRole('link', { name: 'Continue signing in to your relay' }).click()
      await page.getByRole('heading', { name: 'Sign in to Relay Cloud' }).waitFor()
      expect(problems).toEqual([])
    })

    it('resets a password, showing its errors', { timeout }, async () => {
      await page.getByRole('link', { name: 'Forgot your password?' }).click()
      await check('Reset your password')
      await page.getByLabel('Email').fill(email)
      await page.getByRole('button', { name: 'Send the link' }).click()
      await check('Check your email')

      const reset = linkIn(inbox.last(email), `${cloud.url}/reset-password`).href
      await page.goto(reset)
      await check('Choose a new password')
      await page.getByLabel('New password', { exact: true }).fill('a new passphrase')
      await page.getByLabel('New password again').fill('a different one')
      await page.getByRole('button', { name: 'Change password' }).click()
      await page.getByText('The two passwords are not the same.').waitFor()
      await check('Choose a new password')
      await page.getByLabel('New password', { exact: true }).fill('a new passphrase')
      await page.getByLabel('New password again').fill('a new passphrase')
      await page.getByRole('button', { name: 'Change password' }).click()
      await check('Your password was changed')

      await page.goto(reset)
      await check('This link is not valid any more')
      expect(problems).toEqual([])
    })

    it('confirms an email change', { timeout }, async () => {
      const accountId = await cloud.addUser('mover@example.com', password)
      await cloud.app.services.registration.requestEmailChange(accountId, 'moved-reader@example.com')
      await page.goto(linkIn(inbox.last('moved-reader@example.com'), `${cloud.url}/confirm-email`).href)
      await check('Change your email address')
      await page.getByRole('button', { name: 'Use this address' }).click()
      await check('Your email address was changed')
      expect(problems).toEqual([])
    })
  },
)
