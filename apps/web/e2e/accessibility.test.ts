import { checkPageEverywhere, chromiumProblem, type LayoutProblem, launchChromium, requirement } from '@relay/testkit'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RelayUnderTest, startRelay } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

/** Every page of the signed-in app, with what shows once its content has loaded. */
const pages = [
  { path: '/dashboard', ready: ['warnings-row', 'area-problems-collectors'] },
  // Health on Sources: a failing badge with its reason, heartbeat bars and the list of health changes.
  { path: '/sources?tab=collectors', ready: ['collector-row', 'heartbeat-summary', 'health-event'] },
  { path: '/sources?tab=streams', ready: ['stream-row', 'heartbeat-summary', 'health-event'] },
  { path: '/sources?tab=junctions', ready: ['junction-row', 'health-event'] },
  { path: '/backups', heading: 'Backups' },
  { path: '/notifications', heading: 'Notifications' },
  { path: '/settings/notifications', heading: 'Settings' },
  { path: '/settings/account', heading: 'Settings' },
  { path: '/system', heading: 'System' },
] as const

/** The page follows the system's scheme (no theme is stored) by setting data-theme on <html>. */
const themeApplied = (page: Page) => async (colorScheme: 'light' | 'dark') => {
  await page.waitForFunction((scheme) => document.documentElement.dataset.theme === scheme, colorScheme)
}

describe.skipIf(!chromium.available)('Every page at phone and desktop width, light and dark', () => {
  let browser: Browser
  let relay: RelayUnderTest
  let context: BrowserContext
  let page: Page
  let failingId: string

  beforeAll(async () => {
    browser = await launchChromium()
    relay = await startRelay()
    await relay.setFlags({ notifications_polling_interval: 1000 })
    // A collector whose fetch fails, so its error and the dashboard's warnings are on screen too.
    const failing = await relay.failingCollector('Weather station on the roof')
    failingId = failing.id
    await relay.createCollector({ name: 'Bench sensors', collectorType: 'Virtual', settings: { sensorCount: 2 } })
    const stream = await relay.call<{ id: string }>('POST', '/api/connections/streams', {
      name: 'Lobby screen',
      type: 'Virtual',
    })
    await relay.call('POST', '/api/junctions', {
      name: 'Lobby feed',
      collectorIds: [failing.id],
      targets: [{ streamId: stream.body.id, sendRateMs: 1000 }],
    })
    context = await browser.newContext()
    page = await context.newPage()
  })

  afterAll(async () => {
    await context?.close()
    await browser?.close()
    await relay?.close()
  })

  it('has no serious or critical axe violations, and nothing wider than a phone', async () => {
    await page.goto(`${relay.baseUrl}/dashboard`)
    // One toast of each type, kept on screen while every page is checked.
    for (const type of ['success', 'error', 'warning', 'info'] as const) {
      await relay.notify({ type, category: 'system', title: `A ${type}`, message: `${type} body`, duration: 600_000 })
    }
    await page.locator('[data-sonner-toast][data-type="info"]').waitFor({ timeout: 5000 })
    // Open the warnings once; the dashboard remembers it, so they are checked with the rest of the page.
    await page.getByTestId('warnings-header').getByText('Current Warnings').waitFor()
    await page.getByTestId('warnings-toggle').click()
    await page.getByTestId('warnings-row').first().waitFor()
    // Failing by now (three failed polls a second apart), so its red badge and count are checked too.
    await expect.poll(async () => (await relay.collector(failingId)).health.state, { timeout: 10_000 }).toBe('failing')

    const problems: LayoutProblem[] = []
    for (const entry of pages) {
      await page.goto(`${relay.baseUrl}${entry.path}`)
      if ('ready' in entry) {
        for (const testId of entry.ready) {
          await page.getByTestId(testId).first().waitFor()
        }
      } else {
        await page.getByRole('heading', { level: 1, name: entry.heading }).waitFor()
      }
      await page.getByTestId('page-loading').waitFor({ state: 'detached' })
      problems.push(...(await checkPageEverywhere(page, themeApplied(page))))
    }
    expect(problems).toEqual([])
  })

  it('checks the dashboard a relay with nothing configured greets with', async () => {
    const fresh = await startRelay()
    try {
      await page.goto(`${fresh.baseUrl}/dashboard`)
      await page.getByTestId('dashboard-onboarding').waitFor()
      expect(await checkPageEverywhere(page, themeApplied(page))).toEqual([])
    } finally {
      await fresh.close()
    }
  })

  it('checks the setup screen a fresh relay shows', async () => {
    const fresh = await startRelay({ setup: false })
    try {
      await page.goto(fresh.baseUrl)
      await page.getByRole('heading', { level: 1 }).waitFor()
      expect(await checkPageEverywhere(page, themeApplied(page))).toEqual([])
    } finally {
      await fresh.close()
    }
  })
})
