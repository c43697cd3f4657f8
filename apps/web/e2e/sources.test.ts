import { chromiumProblem, launchChromium, requirement } from '@relay/testkit'
import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type RelayUnderTest, startRelay } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

/** The Sources lists refresh every 5 s; allow one refresh more. */
const nextRefresh = 10_000

describe.skipIf(!chromium.available)('Sources page in Chromium', () => {
  let browser: Browser
  let relay: RelayUnderTest
  let page: Page

  beforeAll(async () => {
    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
  })

  beforeEach(async () => {
    relay = await startRelay()
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  })

  afterEach(async () => {
    await page?.close()
    await relay?.close()
  })

  const openTab = async (tab: 'Collectors' | 'Junctions' | 'Streams') => {
    await page.getByRole('navigation', { name: 'Sources' }).getByRole('link', { name: tab }).click()
    await page.getByRole('heading', { level: 2, name: tab }).waitFor()
  }
  const row = (kind: 'collector' | 'stream' | 'junction', name: string) =>
    page.locator(`[data-testid="${kind}-row"][data-name="${name}"]`)
  const text = async (locator: Locator) => (await locator.textContent())?.trim()

  it('creates a collector, a stream and a junction that links them, runs the junction and sees the stream send', async () => {
    await page.goto(`${relay.baseUrl}/sources`)
    await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor()

    await page.getByRole('button', { name: 'New collector' }).click()
    const collectorForm = page.getByRole('form', { name: 'New collector' })
    await collectorForm.getByLabel('Name', { exact: true }).fill('Bench sensors')
    await collectorForm.getByLabel('Type').selectOption('Virtual')
    await collectorForm.getByLabel('Poll rate (seconds)').fill('1')
    await collectorForm.getByLabel('Sensor count').fill('3')
    await collectorForm.getByRole('button', { name: 'Create collector' }).click()
    await row('collector', 'Bench sensors').waitFor()
    await collectorForm.waitFor({ state: 'detached' })
    expect(await text(row('collector', 'Bench sensors').getByTestId('collector-state'))).toBe('Stopped')
    const [collector] = await relay.collectors()
    expect(collector).toMatchObject({ name: 'Bench sensors', collectorType: 'Virtual', pollRateMs: 1000 })
    expect(collector?.settings).toEqual({ sensorCount: 3 })

    await openTab('Streams')
    await page.getByRole('button', { name: 'New stream' }).click()
    const streamForm = page.getByRole('form', { name: 'New stream' })
    await streamForm.getByLabel('Name', { exact: true }).fill('Lobby screen')
    await streamForm.getByLabel('Type').selectOption('Virtual')
    await streamForm.getByLabel('Device name (optional)').fill('lobby-1')
    await streamForm.getByRole('button', { name: 'Create stream' }).click()
    await row('stream', 'Lobby screen').waitFor()
    expect(await text(row('stream', 'Lobby screen').getByTestId('stream-last-sent'))).toBe('Never')
    const [stream] = await relay.streams()
    expect(stream).toMatchObject({ name: 'Lobby screen', type: 'Virtual', deviceName: 'lobby-1', running: false })

    await openTab('Junctions')
    await page.getByRole('button', { name: 'New junction' }).click()
    const junctionForm = page.getByRole('form', { name: 'New junction' })
    await junctionForm.getByLabel('Name', { exact: true }).fill('Lobby feed')
    await junctionForm.getByRole('checkbox', { name: /Bench sensors/ }).check()
    await junctionForm.getByRole('checkbox', { name: /Lobby screen/ }).check()
    await junctionForm.getByLabel('Send rate to Lobby screen, seconds').fill('0.5')
    await junctionForm.getByRole('button', { name: 'Create junction' }).click()
    const junctionRow = row('junction', 'Lobby feed')
    await junctionRow.waitFor()
    expect(await junctionRow.textContent()).toContain('Bench sensors')
    expect(await junctionRow.textContent()).toContain('Lobby screen · every 0.5 s')
    const [junction] = await relay.junctions()
    expect(junction).toMatchObject({
      name: 'Lobby feed',
      status: 'Idle',
      collectorIds: [collector?.id],
      targets: [{ streamId: stream?.id, sendRateMs: 500 }],
    })

    await junctionRow.getByRole('button', { name: 'Start' }).click()
    await expect.poll(() => text(junctionRow.getByTestId('junction-status'))).toBe('Running')
    expect((await relay.junctions())[0]?.status).toBe('Running')

    await openTab('Streams')
    const streamRow = row('stream', 'Lobby screen')
    await expect.poll(() => text(streamRow.getByTestId('stream-running'))).toBe('Running')
    await expect.poll(() => text(streamRow.getByTestId('stream-last-sent')), { timeout: nextRefresh }).toBe('just now')
    expect(await streamRow.locator('time').getAttribute('datetime')).toBe((await relay.streams())[0]?.lastSentTime)

    await openTab('Collectors')
    const collectorRow = row('collector', 'Bench sensors')
    await expect
      .poll(() => text(collectorRow.getByTestId('collector-state')), { timeout: nextRefresh })
      .toMatch(/^Running/)
    await collectorRow.getByRole('button', { name: 'Sensors', exact: true }).click()
    await expect
      .poll(() => page.getByTestId('sensor-list').locator('tbody tr').count(), { timeout: nextRefresh })
      .toBe(3)

    await openTab('Junctions')
    await junctionRow.getByRole('button', { name: 'Stop' }).click()
    await expect.poll(() => text(junctionRow.getByTestId('junction-status'))).toBe('Idle')
    expect((await relay.junctions())[0]?.status).toBe('Idle')
    await openTab('Streams')
    await expect.poll(() => text(streamRow.getByTestId('stream-running'))).toBe('Stopped')
  })

  it("shows the relay's validation error on its field and creates nothing", async () => {
    await page.goto(`${relay.baseUrl}/sources?tab=collectors`)
    await page.getByRole('button', { name: 'New collector' }).click()
    const form = page.getByRole('form', { name: 'New collector' })
    await form.getByLabel('Name', { exact: true }).fill('Bad API')
    await form.getByLabel('Type').selectOption('GenericAPI')
    const url = form.getByLabel('URL', { exact: true })
    await url.fill('ftp://x')

    const reply = page.waitForResponse(
      (response) => response.url().endsWith('/api/collectors') && response.request().method() === 'POST',
    )
    await form.getByRole('button', { name: 'Create collector' }).click()
    expect((await reply).status()).toBe(400)

    const error = form.getByTestId('field-error')
    await error.waitFor()
    expect(await text(error)).toBe('Must start with http:// or https://')
    expect(await url.getAttribute('aria-invalid')).toBe('true')
    expect(await url.getAttribute('aria-describedby')).toContain(await error.getAttribute('id'))
    expect(await relay.collectors()).toEqual([])

    await url.fill('http://127.0.0.1:1/')
    await form.getByRole('button', { name: 'Create collector' }).click()
    await row('collector', 'Bad API').waitFor()
    expect((await relay.collectors()).map((collector) => collector.name)).toEqual(['Bad API'])
  })

  it('says before and after saving that an address on another server removes the saved token', async () => {
    const saved = await relay.createCollector({
      name: 'Weather API',
      collectorType: 'GenericAPI',
      settings: { url: 'http://192.168.1.20:8080/data' },
      accessToken: 'weather-token',
    })
    await page.goto(`${relay.baseUrl}/sources?tab=collectors`)
    await row('collector', 'Weather API').getByRole('button', { name: 'Edit' }).click()
    const form = page.getByRole('form', { name: 'Edit collector' })
    const url = form.getByLabel('URL', { exact: true })
    const token = form.getByLabel('Access token (optional)')
    const note = form.getByTestId('token-removal-note')
    expect(await note.count()).toBe(0)

    await url.fill('http://192.168.1.20:8080/v2/data')
    expect(await note.count()).toBe(0)
    await url.fill('http://192.168.1.30:8080/data')
    expect(await text(note)).toBe(
      'The saved access token will be removed because the address points to another server; enter it again to keep using it.',
    )
    await token.fill('typed-again')
    await note.waitFor({ state: 'detached' })
    await token.fill('')
    await note.waitFor()

    await form.getByRole('button', { name: 'Save collector' }).click()
    await form.waitFor({ state: 'detached' })
    await page
      .locator('[data-sonner-toast]', {
        hasText:
          'The saved access token was removed because the address now points to another server ' +
          '(http://192.168.1.30:8080, not http://192.168.1.20:8080); enter the token again to keep using it.',
      })
      .waitFor()
    expect(await relay.collector(saved.id)).toMatchObject({
      hasAccessToken: false,
      settings: { url: 'http://192.168.1.30:8080/data' },
    })

    await row('collector', 'Weather API').getByRole('button', { name: 'Edit' }).click()
    await url.fill('http://169.254.169.254/latest/meta-data/')
    await form.getByRole('button', { name: 'Save collector' }).click()
    const error = form.getByTestId('field-error')
    await error.waitFor()
    expect(await text(error)).toBe(
      '169.254.169.254 is a link-local address; the relay does not connect to link-local or cloud metadata ' +
        'addresses unless it is started with RELAY_ALLOW_LINK_LOCAL=true',
    )
    expect((await relay.collector(saved.id)).settings).toEqual({ url: 'http://192.168.1.30:8080/data' })
  })

  it('shows each collector as a card on a phone, every action on screen, and a refused fetch in words', async () => {
    const failing = await relay.failingCollector('Roof weather')
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(`${relay.baseUrl}/sources?tab=collectors`)

    const card = row('collector', 'Roof weather')
    await card.waitFor()
    for (const name of ['Stop', 'Sensors', 'Edit', 'Delete Roof weather']) {
      const box = await card.getByRole('button', { name, exact: true }).boundingBox()
      expect(box, name).not.toBeNull()
      expect((box?.x ?? 0) + (box?.width ?? 0), name).toBeLessThanOrEqual(390)
    }
    const lastFetch = card.getByTestId('collector-last-fetch')
    expect(await text(lastFetch.getByTestId('error-text'))).toMatch(
      /^Nothing is listening at 127\.0\.0\.1:1\. Is the service running\?/,
    )
    expect(await text(lastFetch.getByTestId('error-detail'))).toBe(failing.lastFetchErrorMessage)
    expect(await text(lastFetch.getByTestId('error-detail'))).toContain('ECONNREFUSED 127.0.0.1:1')
  })

  it('edits and deletes a stream after asking to confirm', async () => {
    await relay.call('POST', '/api/connections/streams', { name: 'Wall feed', type: 'WebSocket' })
    await page.goto(`${relay.baseUrl}/sources?tab=streams`)
    const streamRow = row('stream', 'Wall feed')
    await streamRow.waitFor()
    const [stream] = await relay.streams()
    const address = `ws://${new URL(relay.baseUrl).host}/api/connections/streams/${stream?.id}/ws`
    expect(await page.locator('main').textContent()).toContain(address)

    await streamRow.getByRole('button', { name: 'Edit' }).click()
    const form = page.getByRole('form', { name: 'Edit stream' })
    expect(await form.textContent()).toContain(address)
    await form.getByLabel('Screen ID (optional)').fill('wall-2')
    await form.getByRole('button', { name: 'Save stream' }).click()
    await form.waitFor({ state: 'detached' })
    await expect.poll(async () => (await relay.streams())[0]?.screenId).toBe('wall-2')
    expect(await streamRow.textContent()).toContain('wall-2')

    await streamRow.getByRole('button', { name: 'Delete Wall feed' }).click()
    expect(await relay.streams()).toHaveLength(1)
    await streamRow.getByRole('button', { name: 'Yes, delete Wall feed' }).click()
    await streamRow.waitFor({ state: 'detached' })
    expect(await relay.streams()).toEqual([])
  })
})
