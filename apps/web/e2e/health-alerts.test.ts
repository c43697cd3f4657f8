import { type Silence, silencePresets } from '@relay/contracts'
import { chromiumProblem, launchChromium, requirement } from '@relay/testkit'
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { durationLabel } from '../src/health-alerts/health-alerts'
import { type RelayUnderTest, startRelay } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

/** Three failed polls a second apart turn a collector failing; the lists refresh every 5 s. */
const healthShows = 20_000

describe.skipIf(!chromium.available)('Acknowledging and silencing warnings in Chromium', () => {
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
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    page = await context.newPage()
  })

  afterEach(async () => {
    await context?.close()
    await relay?.close()
  })

  const text = async (locator: Locator) => (await locator.textContent())?.replace(/\s+/g, ' ').trim()
  const navigateTo = (name: string) =>
    page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click()

  it('acknowledges a failing collector with a note, undoes it, silences it for 5 minutes and ends the silence', async () => {
    const collector = await relay.failingCollector('Roof station')
    const item = `collector:${collector.id}`
    // Acknowledged once failing: turning failing later would count as failing anew and clear the mark.
    await expect
      .poll(async () => (await relay.collector(collector.id)).health.state, { timeout: healthShows })
      .toBe('failing')

    await page.goto(`${relay.baseUrl}/dashboard`)
    await page.getByTestId('warnings-toggle').click()
    const warning = page.locator(`[data-testid="warnings-row"][data-item="${item}"]`).first()
    await warning.waitFor({ timeout: healthShows })

    // Acknowledge, with a note that is too long first: the limit is said in a sentence.
    await warning.getByRole('button', { name: /^Acknowledge/ }).click()
    const acknowledgeForm = page.getByTestId('acknowledge-form')
    const note = acknowledgeForm.getByLabel('Note (optional)')
    expect(await note.evaluate((element) => element === document.activeElement)).toBe(true)
    await note.fill('x'.repeat(501))
    await acknowledgeForm.getByRole('button', { name: 'Acknowledge', exact: true }).click()
    expect(await text(acknowledgeForm.getByTestId('field-error'))).toBe(
      'The note is 501 characters long; keep it to 500 or fewer.',
    )
    expect(await note.getAttribute('aria-invalid')).toBe('true')
    await note.fill('Replacing the sensor board')
    await acknowledgeForm.getByRole('button', { name: 'Acknowledge', exact: true }).click()

    const acknowledged = warning.getByTestId('acknowledged-mark')
    await acknowledged.waitFor({ timeout: healthShows })
    expect(await text(acknowledged.locator(':scope > span'))).toMatch(/^Acknowledged .+ — Replacing the sensor board$/)
    expect(await warning.getAttribute('data-acknowledged')).toBe('true')
    expect(await acknowledgeForm.count()).toBe(0)
    expect(await warning.getByRole('button', { name: /^Acknowledge/ }).count()).toBe(0)

    // Undo: the mark goes, and the warning can be acknowledged again.
    await warning.getByRole('button', { name: `Undo acknowledgement of ${collector.name}`, exact: false }).click()
    await expect.poll(() => acknowledged.count(), { timeout: healthShows }).toBe(0)
    expect(await warning.getAttribute('data-acknowledged')).toBeNull()
    await warning.getByRole('button', { name: /^Acknowledge/ }).waitFor()

    // Silence for 5 minutes, by keyboard: the duration picker takes the focus.
    await warning.getByRole('button', { name: /^Silence/ }).focus()
    await page.keyboard.press('Enter')
    const silenceForm = page.getByTestId('silence-form')
    const duration = silenceForm.getByLabel('Silence for')
    expect(await duration.evaluate((element) => element === document.activeElement)).toBe(true)
    // Every preset, in words (durationLabel's own test pins the words down).
    expect(await duration.locator('option').allTextContents()).toEqual(silencePresets.map(durationLabel))
    await duration.selectOption({ label: '5 minutes' })
    await silenceForm.getByLabel('Reason (optional)').fill('Roof work until noon')
    await silenceForm.getByRole('button', { name: 'Silence', exact: true }).press('Enter')

    const silenced = warning.getByTestId('silenced-mark')
    await silenced.waitFor({ timeout: healthShows })
    expect(await text(silenced.locator(':scope > span'))).toMatch(/^Silenced until .+ — Roof work until noon$/)
    expect(await warning.getAttribute('data-silenced')).toBe('true')
    const greyed = await warning
      .locator('td')
      .first()
      .evaluate((cell) => getComputedStyle(cell).backgroundColor)
    expect(greyed).toBe('rgb(241, 243, 246)')
    const silences = await relay.call<Silence[]>('GET', '/api/health/silences')
    expect(silences.body).toHaveLength(1)
    expect(silences.body[0]?.target).toEqual({ item })
    const minutes = (Date.parse(silences.body[0]?.until ?? '') - Date.parse(silences.body[0]?.createdAt ?? '')) / 60_000
    expect(minutes).toBe(5)

    // On Sources the collector's row is greyed with the same note.
    await navigateTo('Sources')
    const row = page.locator(`[data-testid="collector-row"][data-name="${collector.name}"]`)
    await row.waitFor()
    await expect.poll(() => row.getAttribute('data-silenced'), { timeout: healthShows }).toBe('true')
    expect(await text(row.getByTestId('silenced-note'))).toMatch(/^Silenced until .+ — Roof work until noon$/)

    // Ending the silence takes the mark off both.
    await navigateTo('Dashboard')
    await warning.waitFor({ timeout: healthShows })
    await warning.getByRole('button', { name: /^End silence/ }).click()
    await expect.poll(() => warning.getAttribute('data-silenced'), { timeout: healthShows }).toBeNull()
    expect(await silenced.count()).toBe(0)
    expect((await relay.call<Silence[]>('GET', '/api/health/silences')).body).toEqual([])
    await navigateTo('Sources')
    await row.waitFor()
    await expect.poll(() => row.getAttribute('data-silenced'), { timeout: healthShows }).toBeNull()
    expect(await row.getByTestId('silenced-note').count()).toBe(0)
  })

  it('silences a whole area from its card and draws each sensor’s last hour as a described sparkline', async () => {
    const generator = await relay.createCollector({
      name: 'Bench generator',
      collectorType: 'Virtual',
      pollRateMs: 1000,
      settings: { sensorCount: 2 },
    })
    await relay.startCollector(generator.id)
    const failing = await relay.failingCollector('Roof station')

    // Silence every collector from the Collectors card.
    await page.goto(`${relay.baseUrl}/dashboard`)
    const card = page.getByTestId('area-card-collectors')
    const opener = card.getByRole('button', { name: /^Silence all collectors/ })
    await opener.click()
    expect(await opener.getAttribute('aria-expanded')).toBe('true')
    await card.getByLabel('Silence for').selectOption({ label: '1 hour' })
    await card.getByRole('button', { name: 'Silence', exact: true }).click()
    const areaMark = card.getByTestId('area-silence-collectors')
    await areaMark.waitFor({ timeout: healthShows })
    expect(await text(areaMark.locator(':scope > span'))).toMatch(/^Silenced until \S/)

    // The failing collector's warning is greyed, and its button ends the silence of the whole area.
    await page.getByTestId('warnings-toggle').click()
    const warning = page.locator(`[data-testid="warnings-row"][data-item="collector:${failing.id}"]`).first()
    await expect.poll(() => warning.getAttribute('data-silenced'), { timeout: healthShows }).toBe('true')
    await warning.getByRole('button', { name: /^End area silence/ }).waitFor()
    await card.getByRole('button', { name: 'End silence of all collectors' }).click()
    await expect.poll(() => warning.getAttribute('data-silenced'), { timeout: healthShows }).toBeNull()
    await card.getByRole('button', { name: /^Silence all collectors/ }).waitFor()

    // Each numeric sensor has a sparkline of the last hour, described in words.
    await navigateTo('Sources')
    const row = page.locator('[data-testid="collector-row"][data-name="Bench generator"]')
    await row.getByRole('button', { name: 'Sensors' }).click()
    const sparklines = page.getByTestId('sensor-list').getByRole('img')
    await expect.poll(() => sparklines.count(), { timeout: healthShows }).toBe(2)
    const labels = await sparklines.evaluateAll((all) => all.map((svg) => svg.getAttribute('aria-label')))
    for (const label of labels) {
      expect(label).toMatch(/^.+, last hour: min -?[\d.,]+.*, max -?[\d.,]+.*, last -?[\d.,]+/)
    }
    expect(await sparklines.first().locator('path').getAttribute('d')).toMatch(/^M[\d.]+ [\d.]+/)
  })
})
