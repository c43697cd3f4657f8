import path from 'node:path'
import type { RelayHealth } from '@relay/contracts'
import { chromiumProblem, launchChromium, requirement, tempDir } from '@relay/testkit'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApp, type RelayApp } from '../../relay/src/app.js'
import { loadConfig } from '../../relay/src/config.js'
import { finishSetup } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

describe.skipIf(!chromium.available)('System page in Chromium', () => {
  const folder = tempDir('relay-e2e-')
  let relay: RelayApp
  let baseUrl: string
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    relay = await createApp(
      loadConfig({
        RELAY_DATA_DIR: path.join(folder.path, 'data'),
        RELAY_WEB_DIR: inject('webDist'),
        LOG_LEVEL: 'silent',
      }),
    )
    baseUrl = await relay.listen({ port: 0, host: '127.0.0.1' })
    await finishSetup(baseUrl)
    browser = await launchChromium()
    page = await browser.newPage()
  })

  afterAll(async () => {
    await browser?.close()
    await relay?.close()
    folder.remove()
  })

  it('shows the live health of this relay on the System page', async () => {
    const health = (await (await fetch(`${baseUrl}/api/health`)).json()) as RelayHealth
    await page.goto(`${baseUrl}/system`)
    await page.getByRole('heading', { level: 1, name: 'System' }).waitFor()
    expect(new URL(page.url()).pathname).toBe('/system')
    await expect.poll(() => page.getByTestId('system-status').textContent()).toMatch(/Healthy/)
    expect(await page.getByTestId('system-backend-id').textContent()).toContain(health.backendId)
    expect(await page.getByTestId('system-version').textContent()).toContain(health.version)
    expect(await page.getByTestId('system-db').textContent()).toMatch(/sqlite/i)
  })

  it('keeps polling /api/health while the page is open', async () => {
    let polls = 0
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/health') {
        polls++
      }
    })
    await expect.poll(() => polls, { timeout: 15_000, interval: 250 }).toBeGreaterThanOrEqual(1)
  })

  it('shows navigation with only the pages that exist', async () => {
    const links = await page.getByRole('navigation').getByRole('link').allTextContents()
    expect(links.map((text) => text.trim())).toEqual([
      'Dashboard',
      'Sources',
      'Backups',
      'Notifications',
      'Settings',
      'System',
    ])
  })

  it('renders a not-found view for unknown pages, served through the SPA fallback', async () => {
    const response = await page.goto(`${baseUrl}/no-such-page`)
    expect(response?.status()).toBe(200)
    await page.getByText(/page not found/i).waitFor()
  })
})
