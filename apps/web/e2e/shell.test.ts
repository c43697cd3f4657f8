import { chromiumProblem, launchChromium, requirement } from '@relay/testkit'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type RelayUnderTest, startRelay } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

const phone = { width: 390, height: 844 }
const desktop = { width: 1440, height: 900 }

describe.skipIf(!chromium.available)('App shell in Chromium', () => {
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
    // A context per test: localStorage, where the theme is kept, starts empty every time.
    context = await browser.newContext({ viewport: phone, colorScheme: 'light' })
    page = await context.newPage()
  })

  afterEach(async () => {
    await context?.close()
    await relay?.close()
  })

  const menuButton = () => page.getByRole('button', { name: 'Menu' })
  const navLink = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name })
  const theme = () => page.evaluate(() => document.documentElement.dataset.theme)
  const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)

  it('folds the navigation behind a Menu button on a phone, opened and closed from the keyboard', async () => {
    await page.goto(`${relay.baseUrl}/dashboard`)
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor()
    expect(await menuButton().getAttribute('aria-expanded')).toBe('false')
    expect(await navLink('Sources').isVisible()).toBe(false)

    await menuButton().focus()
    await page.keyboard.press('Enter')
    expect(await menuButton().getAttribute('aria-expanded')).toBe('true')
    await navLink('Sources').waitFor()
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Dashboard')
    await page.keyboard.press('Escape')
    expect(await menuButton().getAttribute('aria-expanded')).toBe('false')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Menu')

    await page.keyboard.press('Enter')
    await navLink('Sources').focus()
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor()
    expect(await menuButton().getAttribute('aria-expanded')).toBe('false')
    expect(await navLink('Sources').isVisible()).toBe(false)

    await page.setViewportSize(desktop)
    expect(await menuButton().isVisible()).toBe(false)
    expect(await navLink('System').isVisible()).toBe(true)
  })

  it('follows the system until light or dark is chosen, and applies the choice before the app loads', async () => {
    await page.setViewportSize(desktop)
    await page.goto(`${relay.baseUrl}/system`)
    await page.getByRole('heading', { level: 1, name: 'System' }).waitFor()
    const lightBackground = await background()
    expect(await theme()).toBe('light')
    await page.emulateMedia({ colorScheme: 'dark' })
    await expect.poll(theme).toBe('dark')
    expect(await background()).not.toBe(lightBackground)

    await page.getByLabel('Theme').selectOption('light')
    expect(await theme()).toBe('light')
    await page.getByLabel('Theme').selectOption('dark')
    await page.emulateMedia({ colorScheme: 'light' })
    expect(await theme()).toBe('dark')

    // Without the app's code, only index.html's inline script can have set the stored theme.
    await page.route('**/*.js', (route) => route.abort())
    await page.reload()
    expect(await theme()).toBe('dark')
    await page.unroute('**/*.js')
    await page.reload()
    await page.getByRole('heading', { level: 1, name: 'System' }).waitFor()
    expect(await page.getByLabel('Theme').inputValue()).toBe('dark')
  })
})
