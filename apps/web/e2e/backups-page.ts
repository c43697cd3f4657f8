import type { RelayBackupList } from '@relay/contracts'
import { launchChromium } from '@relay/testkit'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { startTestCloud, type TestCloud } from '../../cloud/test/cloud-server.js'
// The cloud's global setup (run for this project too) declares what it provides to the tests.
import type {} from '../../cloud/test/global-setup.js'
import { password, signInAtCloud } from './cloud-sign-in'
import { type RelayUnderTest, startRelay } from './relay-under-test'

/** A cloud account for one test: its own email keeps quotas and settings from carrying over. */
export type CloudAccount = { email: string; name: string }
export type CloudUser = { id: string; email: string }

/** The page follows the system's scheme (no theme is stored) by setting data-theme on <html>. */
export const themeApplied = (page: Page) => async (colorScheme: 'light' | 'dark') => {
  await page.waitForFunction((scheme) => document.documentElement.dataset.theme === scheme, colorScheme)
}

/** Resolves once the cloud's sign-in has sent the browser back to the relay's Backups page. */
export function backOnBackups(page: Page, relay: RelayUnderTest): Promise<void> {
  return page.waitForURL((url) => url.origin === relay.baseUrl && url.pathname === '/backups')
}

/** The relay's list of its backups in the cloud, each with what its last verification found. */
export async function relayBackups(relay: RelayUnderTest): Promise<RelayBackupList['backups']> {
  const reply = await relay.call<RelayBackupList>('GET', '/api/cloud-backups/list')
  expect(reply.status).toBe(200)
  return reply.body.backups
}

/**
 * Chromium and a test cloud for the suite, with the pages and relays a test opens closed after it.
 * Call it inside a `describe`.
 */
export function useBackupsPage() {
  let browser: Browser | undefined
  let cloud: TestCloud | undefined
  let contexts: BrowserContext[] = []
  let relays: RelayUnderTest[] = []

  beforeAll(async () => {
    browser = await launchChromium()
    cloud = await startTestCloud('pglite')
  })

  afterEach(async () => {
    for (const context of contexts) {
      await context.close()
    }
    for (const relay of relays) {
      await relay.close()
    }
    contexts = []
    relays = []
  })

  afterAll(async () => {
    await browser?.close()
    await cloud?.close()
  })

  const started = () => {
    if (browser === undefined || cloud === undefined) {
      throw new Error('Chromium and the cloud start in beforeAll')
    }
    return { browser, cloud }
  }

  /** A page in a browser context of its own: cookies of one test never sign in another. */
  async function newPage(): Promise<Page> {
    // Playwright's default, said here because the download test relies on it.
    const context = await started().browser.newContext({ acceptDownloads: true })
    contexts.push(context)
    return context.newPage()
  }

  /** A relay whose cloud is `target` (the suite's cloud by default). */
  async function startLinkedRelay(target: TestCloud = started().cloud): Promise<RelayUnderTest> {
    const relay = await startRelay({ env: { CLOUD_URL: target.url } })
    relays.push(relay)
    return relay
  }

  async function addCloudUser(
    { email, name, pro }: CloudAccount & { pro: boolean },
    target: TestCloud = started().cloud,
  ): Promise<CloudUser> {
    const id = await target.addUser(email, password, name)
    if (pro) {
      await target.app.services.licenses.setGifted(id, true)
    }
    return { id, email }
  }

  return {
    get browser() {
      return started().browser
    },
    get cloud() {
      return started().cloud
    },
    newPage,
    startRelay: startLinkedRelay,
    addCloudUser,
    /** A relay connected to `cloud` (the suite's by default) as a new Pro user, with the browser on its Backups page. */
    async connectedProRelay({ cloud: target = started().cloud, ...account }: CloudAccount & { cloud?: TestCloud }) {
      const relay = await startLinkedRelay(target)
      const user = await addCloudUser({ ...account, pro: true }, target)
      const page = await newPage()
      await page.goto(`${relay.baseUrl}/api/unified-auth/cloud/login?returnTo=%2Fbackups`)
      await signInAtCloud(page, target, user.email)
      await backOnBackups(page, relay)
      return { relay, page, user }
    },
  }
}
