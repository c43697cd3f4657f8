import { dashboardPolling, HOUR } from '@relay/contracts'
import { chromiumProblem, launchChromium, requirement } from '@relay/testkit'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type RelayUnderTest, startRelay } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

const areas = ['junctions', 'collectors', 'streams', 'sensors'] as const
const phone = { width: 390, height: 844 }
const desktop = { width: 1280, height: 800 }
/** A port nothing listens on (and fetch refuses outright), so every fetch from it fails. */
const closedPort = 'http://127.0.0.1:1/'
/** One poll more than the dashboard's interval. */
const nextPoll = dashboardPolling.interval * 2

describe.skipIf(!chromium.available)('Dashboard in Chromium', () => {
  let browser: Browser
  let relay: RelayUnderTest
  let context: BrowserContext
  let page: Page

  beforeAll(async () => {
    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
  })

  beforeEach(async () => {
    relay = await startRelay()
    // A context per test: localStorage starts empty every time.
    context = await browser.newContext({ viewport: desktop })
    page = await context.newPage()
  })

  afterEach(async () => {
    await context?.close()
    await relay?.close()
  })

  const open = async () => {
    await page.goto(`${relay.baseUrl}/dashboard`)
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor()
  }
  const card = (area: (typeof areas)[number]) => page.getByTestId(`area-card-${area}`)
  const activeOf = async (area: (typeof areas)[number]) =>
    (await page.getByTestId(`area-active-${area}`).textContent())?.trim()
  const healthOf = async (area: (typeof areas)[number]) =>
    (await page.getByTestId(`area-health-${area}`).textContent())?.trim()
  const header = async () => (await page.getByTestId('warnings-header').textContent())?.replace(/\s+/g, ' ').trim()
  const toggle = () => page.getByTestId('warnings-toggle')
  const stored = () => page.evaluate((key) => localStorage.getItem(key), dashboardPolling.expandedStorageKey)

  /** A relay with a collector is set up (a fresh one greets with onboarding instead of cards). */
  const runningGenerator = async () => {
    const { id } = await relay.createCollector({
      name: 'Bench generator',
      collectorType: 'Virtual',
      settings: { sensorCount: 2 },
    })
    await relay.startCollector(id)
    await expect.poll(async () => (await relay.collector(id)).health.state).toBe('healthy')
  }

  it('opens from / as the first page, greets a fresh relay, then shows four healthy areas and no warnings', async () => {
    await page.goto(relay.baseUrl)
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor()
    expect(new URL(page.url()).pathname).toBe('/dashboard')
    const links = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()
    expect(links.map((text) => text.trim()).slice(0, 2)).toEqual(['Dashboard', 'Sources'])
    await page.getByTestId('dashboard-onboarding').getByRole('link', { name: 'Add your first collector' }).waitFor()

    await runningGenerator()
    await expect.poll(() => healthOf('collectors'), { timeout: nextPoll }).toBe('All Healthy')
    for (const area of areas) {
      await expect.poll(() => healthOf(area)).toBe('All Healthy')
      expect(await card(area).getAttribute('data-severity')).toBe('success')
      expect(await card(area).textContent()).toContain(`${area[0]?.toUpperCase()}${area.slice(1)}`)
    }
    expect(await activeOf('junctions')).toBe('0')
    expect(await activeOf('collectors')).toBe('1')
    expect(await activeOf('streams')).toBe('0')
    expect(await page.getByTestId('area-problems-collectors').count()).toBe(0)
    expect(await page.getByTestId('dashboard-onboarding').count()).toBe(0)
    expect(await header()).toBe('No Warnings')
  })

  it('lays the areas out two by two on a phone and in one row of four on a desktop', async () => {
    await runningGenerator()
    await page.setViewportSize(phone)
    await open()
    await card('collectors').waitFor()
    const [junctions, collectors, streams, sensors] = await boxes(page)
    expect(collectors.y).toBeCloseTo(junctions.y, 0)
    expect(collectors.x).toBeGreaterThan(junctions.x + junctions.width - 1)
    expect(streams.x).toBeCloseTo(junctions.x, 0)
    expect(streams.y).toBeGreaterThan(junctions.y + junctions.height - 1)
    expect(sensors.x).toBeCloseTo(collectors.x, 0)
    expect(sensors.y).toBeCloseTo(streams.y, 0)
    expect(collectors.x + collectors.width).toBeLessThanOrEqual(phone.width)

    await page.setViewportSize(desktop)
    const row = await boxes(page)
    for (const [index, box] of row.entries()) {
      expect(box.y).toBeCloseTo(row[0].y, 0)
      expect(box.height).toBeCloseTo(row[0].height, 0)
      if (index > 0) {
        const left = row[index - 1] as Box
        expect(box.x).toBeGreaterThan(left.x + left.width - 1)
      }
    }
    expect(row[3].x + row[3].width).toBeLessThanOrEqual(desktop.width)
  })

  it('keeps the warnings collapsed by default, and remembers opening and closing them across reloads', async () => {
    await runningGenerator()
    await open()
    expect(await toggle().getAttribute('aria-expanded')).toBe('false')
    expect(await stored()).toBeNull()
    expect(await page.getByText(/Nothing needs attention/).isVisible()).toBe(false)

    await toggle().click()
    expect(await toggle().getAttribute('aria-expanded')).toBe('true')
    expect(await stored()).toBe('true')
    await page.getByText(/Nothing needs attention/).waitFor()

    await page.reload()
    await page.getByText(/Nothing needs attention/).waitFor()
    expect(await toggle().getAttribute('aria-expanded')).toBe('true')

    await toggle().click()
    expect(await stored()).toBe('false')
    await page.reload()
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor()
    expect(await toggle().getAttribute('aria-expanded')).toBe('false')
    expect(await page.getByText(/Nothing needs attention/).isVisible()).toBe(false)
  })

  it('counts the current errors and warnings and lists them errors first, each newest first, never-seen ones last', async () => {
    // An hour between polls: each failing collector fetches once, so its issue keeps its time.
    const older = await relay.createCollector({
      name: 'Older API',
      collectorType: 'GenericAPI',
      pollRateMs: HOUR,
      settings: { url: closedPort },
    })
    await relay.startCollector(older.id)
    await expect.poll(async () => (await relay.collector(older.id)).lastFetchTime).not.toBeNull()
    const newer = await relay.createCollector({
      name: 'Newer API',
      collectorType: 'GenericAPI',
      pollRateMs: HOUR,
      settings: { url: closedPort },
    })
    await relay.startCollector(newer.id)
    await expect.poll(async () => (await relay.collector(newer.id)).lastFetchTime).not.toBeNull()
    const idle = await relay.createCollector({
      name: 'Idle generator',
      collectorType: 'Virtual',
      settings: { sensorCount: 2 },
    })

    await open()
    await expect.poll(header).toBe('Current Warnings · 2 errors · 1 warning')
    expect(await healthOf('collectors')).toBe('2 Errors')
    expect(await card('collectors').getAttribute('data-severity')).toBe('error')
    expect(await activeOf('collectors')).toBe('2')
    expect(await page.getByTestId('warnings-row').first().isVisible()).toBe(false)

    await toggle().click()
    const rows = page.getByTestId('warnings-row')
    await rows.first().waitFor()
    expect(await rows.evaluateAll((all) => all.map((row) => row.dataset.issueId))).toEqual([
      `collector-fetch-failed-${newer.id}`,
      `collector-fetch-failed-${older.id}`,
      `collector-never-fetched-${idle.id}`,
    ])
    const cells = await rows.evaluateAll((all) =>
      all.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent?.trim())),
    )
    expect(cells[0]?.slice(0, 3)).toEqual(['Collectors', 'Error', 'Newer API: Fetch failed'])
    expect(cells[0]?.[4]).toBe('just now')
    expect(cells[2]?.slice(0, 5)).toEqual([
      'Collectors',
      'Warning',
      'Idle generator: No data yet',
      'Never fetched data',
      'Never',
    ])
    const times = await rows
      .locator('time')
      .evaluateAll((all) =>
        all.map((time) => ({ at: time.getAttribute('datetime'), title: time.getAttribute('title') })),
      )
    expect(times).toHaveLength(2)
    expect(Date.parse(times[0]?.at ?? '')).toBeGreaterThan(Date.parse(times[1]?.at ?? ''))
    expect(times[0]?.title).toBeTruthy()
    expect(await page.locator('thead th').allTextContents()).toEqual([
      'Area',
      'Severity',
      'Issue',
      'Description',
      'Time',
      'Status',
    ])
  })

  it('shows Unknown and no error message while the statistics cannot be fetched, keeps polling, and recovers', async () => {
    await relay.createCollector({ name: 'Idle generator', collectorType: 'Virtual', settings: { sensorCount: 2 } })
    const logged: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') {
        logged.push(message.text())
      }
    })
    await open()
    await expect.poll(() => healthOf('collectors')).toBe('1 Warning')
    expect(await activeOf('sensors')).toBe('0')

    let attempts = 0
    await page.route('**/api/collectors/stats', (route) => {
      attempts++
      return route.abort()
    })
    await page.route('**/api/connections/streams/stats', (route) =>
      route.fulfill({ status: 503, contentType: 'text/plain', body: 'Service Unavailable' }),
    )
    await expect.poll(() => healthOf('collectors'), { timeout: nextPoll }).toBe('Unknown')
    for (const area of ['collectors', 'sensors', 'streams'] as const) {
      await expect.poll(() => healthOf(area)).toBe('Unknown')
      expect(await activeOf(area)).toBe('0')
      expect(await card(area).getAttribute('data-severity')).toBe('unknown')
      expect(await card(area).getAttribute('aria-busy')).toBe('true')
      expect(await card(area).textContent()).toContain('Loading')
    }
    expect(await healthOf('junctions')).toBe('All Healthy')
    expect(await page.getByRole('alert').count()).toBe(0)
    expect(await page.locator('main').textContent()).not.toMatch(/error|failed|could not/i)
    expect(await header()).toBe('No Warnings')
    expect(logged.some((text) => text.includes('could not fetch collector statistics'))).toBe(true)

    // Still polling while it fails.
    const seen = attempts
    await expect.poll(() => attempts, { timeout: nextPoll }).toBeGreaterThan(seen)

    await page.unrouteAll()
    await expect.poll(() => healthOf('collectors'), { timeout: nextPoll }).toBe('1 Warning')
    expect(await card('collectors').getAttribute('data-severity')).toBe('warning')
    await expect.poll(() => healthOf('streams')).toBe('All Healthy')
    expect(await card('collectors').getAttribute('aria-busy')).toBe('false')
    expect(await header()).toBe('Current Warnings · 0 errors · 1 warning')
  })
})

type Box = { x: number; y: number; width: number; height: number }

/** The four cards' boxes, in the order of `areas`. */
async function boxes(page: Page): Promise<[Box, Box, Box, Box]> {
  const [junctions, collectors, streams, sensors] = await Promise.all(
    areas.map(async (area) => {
      const box = await page.getByTestId(`area-card-${area}`).boundingBox()
      if (!box) {
        throw new Error(`area-card-${area} is not visible`)
      }
      return box
    }),
  )
  return [junctions as Box, collectors as Box, streams as Box, sensors as Box]
}
