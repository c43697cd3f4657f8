import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Collector, HistoryReply } from '@relay/contracts'
import { chromiumProblem, launchChromium, requirement } from '@relay/testkit'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type RelayUnderTest, startRelay } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

/**
 * Three failed polls a second apart turn a collector failing and two good ones healthy again; the
 * Sources lists refresh every 5 s and the heartbeat every 10 s, so allow one refresh more.
 */
const healthShows = 20_000

/** Notifications arrive as toasts; the page records every toast it is shown, closed ones too. */
declare global {
  interface Window {
    shownToasts: { id: string; text: string }[]
  }
}

function recordToasts() {
  window.shownToasts = []
  new MutationObserver(() => {
    for (const toast of document.querySelectorAll<HTMLElement>('[data-sonner-toast]')) {
      const id = toast.dataset.testid ?? ''
      if (!window.shownToasts.some((shown) => shown.id === id)) {
        window.shownToasts.push({ id, text: toast.textContent ?? '' })
      }
    }
  }).observe(document, { childList: true, subtree: true })
}

describe.skipIf(!chromium.available)('Source health in Chromium', () => {
  let browser: Browser
  let relay: RelayUnderTest
  let context: BrowserContext
  let page: Page
  let dataServer: Server | undefined

  beforeAll(async () => {
    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
  })

  beforeEach(async () => {
    relay = await startRelay()
    await relay.setFlags({ notifications_polling_interval: 1000 })
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    await context.addInitScript(recordToasts)
    page = await context.newPage()
  })

  afterEach(async () => {
    await context?.close()
    await relay?.close()
    dataServer?.closeAllConnections()
    await new Promise((resolve) => (dataServer ? dataServer.close(resolve) : resolve(undefined)))
    dataServer = undefined
  })

  const collectorRow = (name: string) => page.locator(`[data-testid="collector-row"][data-name="${name}"]`)
  const text = async (locator: ReturnType<Page['locator']>) =>
    (await locator.textContent())?.replace(/\s+/g, ' ').trim()
  const toastsWith = async (words: string) =>
    (await page.evaluate(() => window.shownToasts)).filter((toast) => toast.text.includes(words))

  /** A JSON API on a local port that always answers. */
  async function workingApi(): Promise<string> {
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ temperature: 21.5 }))
    })
    dataServer = server
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/data`
  }

  it('turns a collector at a closed port red, counts it on the dashboard, notifies once, and shows its recovery', async () => {
    const collector: Collector = await relay.failingCollector('Roof station')
    await page.goto(`${relay.baseUrl}/sources?tab=collectors`)
    const row = collectorRow('Roof station')
    await row.waitFor()

    // Failing after three failed polls, with the reason in words: never "Running".
    await expect.poll(() => row.getAttribute('data-health'), { timeout: healthShows }).toBe('failing')
    await expect
      .poll(() => text(row.getByTestId('collector-state')))
      .toMatch(/^Failing\s*Nothing is listening at 127\.0\.0\.1:1/)
    expect(await row.getByTestId('collector-state').locator('[data-state="failing"]').count()).toBe(1)

    // The heartbeat bar shows failed minutes, each named in words.
    const failedMinutes = row.locator('[data-testid="heartbeat"] li[data-status="failed"]')
    await expect.poll(() => failedMinutes.count(), { timeout: healthShows }).toBeGreaterThan(0)
    const label = await failedMinutes.last().getAttribute('aria-label')
    expect(label).toMatch(/^\d\d:\d\d( [AP]M)?, \d+ failed of \d+ polls?, last error .*ECONNREFUSED/)
    expect(await failedMinutes.last().getAttribute('title')).toBe(label)
    expect(await text(row.getByTestId('heartbeat-summary'))).toMatch(/^Failures in \d+ of the last 60 minutes$/)
    expect(await row.getByRole('list', { name: 'Last hour of Roof station, minute by minute' }).count()).toBe(1)

    // The change of state is listed below, and the filter keeps it.
    const events = page.getByTestId('health-events')
    const failingEvent = events.locator(
      `[data-testid="health-event"][data-item="collector:${collector.id}"][data-to="failing"]`,
    )
    await failingEvent.first().waitFor({ timeout: healthShows })
    await events.getByLabel('Show changes of').selectOption(`collector:${collector.id}`)
    await failingEvent.first().waitFor()
    expect(await failingEvent.first().getByRole('link').textContent()).toBe('Roof station')
    expect(
      await failingEvent
        .first()
        .locator('[data-state]')
        .evaluateAll((all) => all.map((b) => b.textContent)),
    ).toEqual([expect.stringMatching(/^(Starting|Degraded|Running)$/), 'Failing'])

    // The dashboard counts it, and its card and warning lead back to it.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboard' }).click()
    const problems = page.getByTestId('area-problems-collectors')
    await expect.poll(() => text(problems), { timeout: healthShows }).toBe('· 1 failing')
    expect(await text(page.getByTestId('area-card-collectors'))).toContain('1 / 1 polling')
    await page.getByTestId('warnings-toggle').click()
    const warning = page.getByTestId('warnings-row').first()
    expect(await warning.getAttribute('data-severity')).toBe('error')
    await warning.getByRole('link', { name: /Roof station/ }).click()
    await expect.poll(() => new URL(page.url()).hash).toBe(`#collector-${collector.id}`)
    expect(new URL(page.url()).search).toBe('?tab=collectors')
    await expect.poll(() => row.evaluate((element) => getComputedStyle(element).outlineStyle)).toBe('solid')

    // One notification however long it fails: its open notification is updated, not repeated.
    await expect.poll(() => toastsWith('Collector failing'), { timeout: healthShows }).toHaveLength(1)
    await expect.poll(async () => (await relay.collector(collector.id)).health.consecutiveFailures).toBeGreaterThan(5)
    expect(await toastsWith('Collector failing')).toHaveLength(1)
    const history = await relay.call<HistoryReply>('GET', '/api/notifications/history?limit=50')
    const failingNotices = history.body.notifications.filter((notice) => notice.title === 'Collector failing')
    expect(failingNotices).toHaveLength(1)
    expect(failingNotices[0]?.occurrences).toBeGreaterThan(1)

    // Pointed at a working API, it recovers: green again, and a "Recovered" notice.
    const url = await workingApi()
    const patched = await relay.call('PATCH', `/api/collectors/${collector.id}`, { settings: { url } })
    expect(patched.status).toBe(200)
    await expect.poll(() => row.getAttribute('data-health'), { timeout: healthShows }).toBe('healthy')
    expect(await text(row.getByTestId('collector-state'))).toBe('Running')
    await expect.poll(() => toastsWith('Roof station is healthy again'), { timeout: healthShows }).toHaveLength(1)
    expect((await toastsWith('Roof station is healthy again'))[0]?.text).toContain('Recovered')
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboard' }).click()
    await page.getByTestId('area-card-collectors').waitFor()
    await expect.poll(() => problems.count(), { timeout: healthShows }).toBe(0)
  })

  it('greets a relay with nothing configured with a way to add the first collector', async () => {
    await page.goto(`${relay.baseUrl}/dashboard`)
    const onboarding = page.getByTestId('dashboard-onboarding')
    await onboarding.waitFor()
    expect(await page.getByTestId('area-card-collectors').count()).toBe(0)
    await onboarding.getByRole('link', { name: 'Add your first collector' }).click()
    await page.getByRole('form', { name: 'New collector' }).waitFor()
    expect(new URL(page.url()).searchParams.get('tab')).toBe('collectors')
  })
})
