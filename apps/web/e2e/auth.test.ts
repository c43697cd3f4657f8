import { unifiedAuthRoutes } from '@relay/contracts'
import { chromiumProblem, launchChromium, requirement } from '@relay/testkit'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startTestCloud, type TestCloud } from '../../cloud/test/cloud-server.js'
// The cloud's global setup (run for this project too) declares what it provides to the tests.
import type {} from '../../cloud/test/global-setup.js'
import { password, signInAtCloud } from './cloud-sign-in'
import { type RelayUnderTest, startRelay } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

describe.skipIf(!chromium.available)('sign-in in Chromium', () => {
  let browser: Browser
  let cloud: TestCloud
  let relay: RelayUnderTest | undefined
  let context: BrowserContext | undefined

  beforeAll(async () => {
    browser = await launchChromium()
    cloud = await startTestCloud('pglite')
  })

  afterEach(async () => {
    await context?.close()
    await relay?.close()
    context = undefined
    relay = undefined
  })

  afterAll(async () => {
    await browser?.close()
    await cloud?.close()
  })

  /** A page of its own: cookies of one test never sign in another. */
  async function openPage(): Promise<Page> {
    context = await browser.newContext()
    return context.newPage()
  }

  async function cloudUser(email: string, name: string, options: { pro?: boolean } = {}): Promise<string> {
    const id = await cloud.addUser(email, password, name)
    if (options.pro) {
      await cloud.app.services.licenses.setGifted(id, true)
    }
    return id
  }

  function backOnRelay(page: Page, pathname: string) {
    return page.waitForURL((url) => url.origin === relay?.baseUrl && url.pathname === pathname)
  }

  /** Paths of API calls other than sign-in's own: the app's pages and notifications. */
  function recordAppCalls(page: Page): string[] {
    const calls: string[] = []
    page.on('request', (request) => {
      const { pathname } = new URL(request.url())
      if (pathname.startsWith('/api/') && !pathname.startsWith('/api/unified-auth/')) {
        calls.push(pathname)
      }
    })
    return calls
  }

  const connectionState = (page: Page) =>
    page.getByTestId('cloud-connection').locator('[data-state]').getAttribute('data-state')

  describe('connecting to the cloud from Settings → Account', () => {
    it('connects, shows the account and its license, refreshes the token and disconnects', async () => {
      relay = await startRelay({ env: { CLOUD_URL: cloud.url } })
      await cloudUser('ada@example.com', 'Ada Lovelace', { pro: true })
      const page = await openPage()

      await page.goto(`${relay.baseUrl}/settings`)
      await page.getByRole('link', { name: 'Account' }).click()
      expect(new URL(page.url()).pathname).toBe('/settings/account')
      await expect.poll(() => connectionState(page)).toBe('none')
      expect(await page.getByTestId('account-mode').textContent()).toBe('No sign-in')

      await page.getByRole('button', { name: 'Connect to cloud' }).click()
      await signInAtCloud(page, cloud, 'ada@example.com')
      await backOnRelay(page, '/settings/account')

      const outcome = page.getByTestId('cloud-outcome')
      await outcome.waitFor()
      expect(await outcome.getAttribute('data-outcome')).toBe('connected')
      expect(await outcome.textContent()).toContain('Connected to Relay Cloud')
      await expect.poll(() => new URL(page.url()).search).toBe('')

      await expect.poll(() => connectionState(page)).toBe('connected')
      expect(await page.getByTestId('cloud-connection').textContent()).toBe('Connected')
      expect(await page.getByTestId('cloud-account').textContent()).toContain('ada@example.com')
      expect(await page.getByTestId('cloud-account').textContent()).toContain('Ada Lovelace')
      expect(await page.getByTestId('cloud-license').textContent()).toBe('Valid')
      expect(await page.getByTestId('cloud-token').textContent()).toMatch(/^Expires in \d+ min$/)
      expect(await page.getByTestId('cloud-account-page').getAttribute('href')).toBe(`${cloud.url}/account`)
      // Connecting from the Account page leaves the sign-in mode alone.
      expect(await page.getByTestId('account-mode').textContent()).toBe('No sign-in')

      const sessions = page.getByTestId('cloud-session')
      await expect.poll(() => sessions.count()).toBe(1)
      expect(await sessions.first().getAttribute('data-current')).toBe('true')
      expect(await sessions.first().textContent()).toContain('This relay')

      const status = await relay.authStatus()
      expect(status).toMatchObject({ mode: 'none', backendAuthenticated: true, hasValidLicense: true })
      expect(status.cloud?.email).toBe('ada@example.com')

      await page.getByRole('button', { name: 'Force refresh' }).click()
      await expect.poll(() => page.getByTestId('cloud-action-result').textContent()).toMatch(/refreshed/i)
      expect(await page.getByTestId('cloud-action-result').getAttribute('class')).not.toMatch(/resultBad/)

      await page.getByRole('button', { name: 'Disconnect' }).click()
      await expect.poll(() => connectionState(page)).toBe('none')
      expect(await page.getByTestId('cloud-connection').textContent()).toBe('Not connected')
      await page.getByRole('button', { name: 'Connect to cloud' }).waitFor()
      expect(await page.getByTestId('cloud-sessions').count()).toBe(0)
      expect(await relay.authStatus()).toMatchObject({ backendAuthenticated: false, cloud: null })
    })

    it('says so when the cloud sign-in is cancelled, and stays not connected', async () => {
      relay = await startRelay({ env: { CLOUD_URL: cloud.url } })
      const page = await openPage()
      await page.goto(`${relay.baseUrl}/settings/account`)
      await page.getByRole('button', { name: 'Connect to cloud' }).click()
      await page.waitForURL((url) => url.origin === cloud.url && url.pathname.startsWith('/interaction/'))
      await page.getByRole('button', { name: 'Cancel' }).click()
      await backOnRelay(page, '/settings/account')

      const outcome = page.getByTestId('cloud-outcome')
      await outcome.waitFor()
      expect(await outcome.getAttribute('data-outcome')).toBe('denied')
      expect(await outcome.getAttribute('role')).toBe('alert')
      expect(await outcome.textContent()).toContain('Cloud sign-in cancelled')
      await expect.poll(() => new URL(page.url()).search).toBe('')
      expect(await connectionState(page)).toBe('none')

      await outcome.getByRole('button', { name: 'Dismiss message' }).click()
      expect(await page.getByTestId('cloud-outcome').count()).toBe(0)
    })
  })

  describe('changing the sign-in mode on Settings → Account', () => {
    it('creates the first local account from mode none, then switches back', async () => {
      relay = await startRelay()
      const page = await openPage()
      await page.goto(`${relay.baseUrl}/settings/account`)
      await page.getByRole('heading', { level: 2, name: 'Sign-in' }).waitFor()
      expect(await page.getByTestId('account-user').textContent()).toContain('Nobody')

      await page.getByLabel('Local accounts').check()
      await page.getByLabel('Username').fill('admin')
      await page.getByLabel('Password', { exact: true }).fill(password)
      await page.getByLabel('Confirm password').fill(password)
      await page.getByRole('button', { name: 'Create account and switch' }).click()

      await expect.poll(() => page.getByTestId('account-mode').textContent()).toBe('Local accounts')
      expect(await page.getByTestId('signed-in-user').textContent()).toBe('adminLocal account')
      expect(await relay.authStatus()).toMatchObject({ mode: 'local', hasLocalUsers: true, isAuthenticated: false })

      await page.getByLabel('No sign-in').check()
      await page.getByRole('button', { name: 'Switch to no sign-in' }).click()
      await expect.poll(() => page.getByTestId('account-mode').textContent()).toBe('No sign-in')
      expect(await relay.authStatus()).toMatchObject({ mode: 'none', isAuthenticated: true })
    })

    it("shows the relay's refusal when the page was behind, and catches up", async () => {
      relay = await startRelay({ env: { CLOUD_URL: cloud.url } })
      await cloudUser('alan@example.com', 'Alan Turing')
      const page = await openPage()
      await page.goto(`${relay.baseUrl}/settings/account`)
      await page.getByRole('button', { name: 'Connect to cloud' }).click()
      await signInAtCloud(page, cloud, 'alan@example.com')
      await backOnRelay(page, '/settings/account')
      await expect.poll(() => connectionState(page)).toBe('connected')

      // Another tab disconnects the cloud; this page still shows it connected.
      const disconnected = await relay.call('POST', unifiedAuthRoutes.cloudLogout.url)
      expect(disconnected.status).toBe(200)
      await page.getByLabel('Cloud account').check()
      await page.getByRole('button', { name: 'Switch to cloud account' }).click()

      const error = page.getByTestId('mode-error')
      await error.waitFor()
      expect(await error.textContent()).toContain('Connect the relay to the cloud first')
      expect(await page.getByTestId('account-mode').textContent()).toBe('No sign-in')
      await expect.poll(() => connectionState(page)).toBe('none')
    })
  })

  describe('local accounts', () => {
    it('sets up the first account, signs out, refuses a wrong password and signs in again', async () => {
      relay = await startRelay({ setup: false })
      const page = await openPage()
      const appCalls = recordAppCalls(page)

      await page.goto(`${relay.baseUrl}/`)
      await page.getByRole('heading', { level: 1, name: 'Set up Relay' }).waitFor()
      await page.getByLabel('Local accounts').check()

      await page.getByLabel('Username').fill('operator')
      await page.getByLabel('Password', { exact: true }).fill('short')
      await page.getByRole('button', { name: 'Create account' }).click()
      expect(await page.getByTestId('error-password').textContent()).toBe('At least 8 characters')
      await page.getByLabel('Password', { exact: true }).fill(password)
      await page.getByLabel('Confirm password').fill(`${password}!`)
      await page.getByRole('button', { name: 'Create account' }).click()
      expect(await page.getByTestId('error-confirm').textContent()).toBe('The passwords do not match')
      // Nothing reached the relay yet, and the app did not start polling behind the setup screen.
      expect(await relay.authStatus()).toMatchObject({ setupRequired: true, hasLocalUsers: false })
      expect(appCalls).toEqual([])

      await page.getByLabel('Confirm password').fill(password)
      await page.getByRole('button', { name: 'Create account' }).click()
      await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor()
      expect(await page.getByTestId('signed-in-user').textContent()).toBe('operatorLocal account')
      expect(await relay.authStatus()).toMatchObject({ mode: 'local', setupRequired: false, isAuthenticated: false })

      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('heading', { level: 1, name: 'Sign in to Relay' }).waitFor()
      expect(await page.getByTestId('signed-in-user').count()).toBe(0)
      expect(await apiStatusFromPage(page, '/api/feature-flags')).toBe(401)

      await page.getByLabel('Username').fill('operator')
      await page.getByLabel('Password').fill('not the password')
      await page.getByRole('button', { name: 'Sign in' }).click()
      const error = page.getByTestId('form-error')
      await error.waitFor()
      expect(await error.textContent()).toContain('Wrong username or password')
      expect(await page.getByLabel('Password').inputValue()).toBe('')

      await page.getByLabel('Password').fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor()
      expect(await page.getByTestId('signed-in-user').textContent()).toContain('operator')
      expect(await apiStatusFromPage(page, '/api/feature-flags')).toBe(200)

      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('heading', { level: 1, name: 'Sign in to Relay' }).waitFor()
      expect(await apiStatusFromPage(page, '/api/feature-flags')).toBe(401)
    })

    it('tells a user who failed too often to wait, even with the right password', async () => {
      relay = await startRelay({ setup: false })
      const created = await relay.call('POST', unifiedAuthRoutes.localSetup.url, { username: 'operator', password })
      expect(created.status).toBe(201)
      const page = await openPage()
      await page.goto(`${relay.baseUrl}/sources`)
      await page.getByRole('heading', { level: 1, name: 'Sign in to Relay' }).waitFor()

      const error = page.getByTestId('form-error')
      await page.getByLabel('Username').fill('operator')
      for (let attempt = 1; attempt <= 5; attempt++) {
        await page.getByLabel('Password').fill(`wrong password ${attempt}`)
        await page.getByRole('button', { name: 'Sign in' }).click()
        // A refused sign-in empties the password field.
        await expect.poll(() => page.getByLabel('Password').inputValue()).toBe('')
        expect(await error.textContent()).toContain('Wrong username or password')
      }
      await page.getByLabel('Password').fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await expect.poll(() => error.textContent()).toContain('Too many failed sign-ins')
      expect(await page.getByRole('heading', { level: 1, name: 'Sign in to Relay' }).count()).toBe(1)
    })

    it('goes back to the sign-in screen when the relay ends the session', async () => {
      relay = await startRelay({ setup: false })
      const page = await openPage()
      await page.goto(`${relay.baseUrl}/`)
      await page.getByLabel('Local accounts').check()
      await page.getByLabel('Username').fill('operator')
      await page.getByLabel('Password', { exact: true }).fill(password)
      await page.getByLabel('Confirm password').fill(password)
      await page.getByRole('button', { name: 'Create account' }).click()
      await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor()

      // Another tab signs out: this one learns of it from its next API call's 401.
      await context?.clearCookies()
      await page.getByRole('link', { name: 'Sources' }).click()
      await page.getByRole('heading', { level: 1, name: 'Sign in to Relay' }).waitFor({ timeout: 10_000 })
    })
  })

  describe('setup screen', () => {
    it('finishes setup without sign-in and opens the app', async () => {
      relay = await startRelay({ setup: false })
      const page = await openPage()
      await page.goto(`${relay.baseUrl}/sources`)
      await page.getByRole('heading', { level: 1, name: 'Set up Relay' }).waitFor()
      await page.getByLabel('No sign-in').check()
      await page.getByRole('button', { name: 'Continue without sign-in' }).click()
      await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor()
      expect(await page.getByTestId('signed-in-user').count()).toBe(0)
      expect(await relay.authStatus()).toMatchObject({ mode: 'none', setupRequired: false, isAuthenticated: true })
    })

    it('switches the relay to cloud mode and signs the browser in as the cloud user', async () => {
      relay = await startRelay({ setup: false, env: { CLOUD_URL: cloud.url } })
      await cloudUser('grace@example.com', 'Grace Hopper')
      const page = await openPage()

      await page.goto(`${relay.baseUrl}/`)
      await page.getByRole('heading', { level: 1, name: 'Set up Relay' }).waitFor()
      await page.getByLabel('Cloud account').check()
      await page.getByRole('button', { name: 'Sign in with Relay Cloud' }).click()
      await signInAtCloud(page, cloud, 'grace@example.com')
      await backOnRelay(page, '/settings/account')

      await page.getByTestId('signed-in-user').waitFor()
      expect(await page.getByTestId('signed-in-user').textContent()).toBe('Grace HopperRelay Cloud account')
      expect(await page.getByTestId('account-mode').textContent()).toBe('Cloud account')
      expect(await page.getByTestId('account-user').textContent()).toContain('Grace Hopper')
      await expect.poll(() => connectionState(page)).toBe('connected')
      expect(await page.getByTestId('cloud-license').textContent()).toBe('None')
      expect(await relay.authStatus()).toMatchObject({ mode: 'cloud', setupRequired: false, isAuthenticated: false })

      expect(await page.getByTestId('cloud-outcome').getAttribute('data-outcome')).toBe('connected')

      await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('heading', { level: 1, name: 'Sign in to Relay' }).waitFor()
      expect(await page.getByLabel('Username').count()).toBe(0)
      // The sign-in it reported is over: the sign-in screen does not repeat it.
      expect(await page.getByTestId('cloud-outcome').count()).toBe(0)

      // Signing out of the relay signs nobody back in: the cloud asks for the password again,
      // though this browser still holds its cloud session.
      await page.getByRole('button', { name: 'Sign in with Relay Cloud' }).click()
      await signInAtCloud(page, cloud, 'grace@example.com')
      await page.getByTestId('signed-in-user').waitFor()
      expect(new URL(page.url()).pathname).toBe('/settings/account')
      expect(await page.getByTestId('signed-in-user').textContent()).toContain('Grace Hopper')
    })
  })
})

/** What the relay answers this page's cookies on an API path. */
function apiStatusFromPage(page: Page, path: string): Promise<number> {
  return page.evaluate(async (url) => (await fetch(url)).status, path)
}
