import type { RelayBackupList, VerificationOverview } from '@relay/contracts'
import { checkPageEverywhere, chromiumProblem, launchChromium, requirement } from '@relay/testkit'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startTestCloud, type TestCloud } from '../../cloud/test/cloud-server.js'
// The cloud's global setup (run for this project too) declares what it provides to the tests.
import type {} from '../../cloud/test/global-setup.js'
import { password, signInAtCloud } from './cloud-sign-in'
import { type RelayUnderTest, startRelay } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

describe.skipIf(!chromium.available)('backup verification on the cloud backups page in Chromium', () => {
  let browser: Browser
  let cloud: TestCloud
  let relay: RelayUnderTest | undefined
  let context: BrowserContext | undefined
  let userCount = 0

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

  /** A relay connected to a new Pro account, with the browser on its Backups page and one backup made there. */
  async function pageWithOneBackup(): Promise<{ relay: RelayUnderTest; page: Page }> {
    relay = await startRelay({ env: { CLOUD_URL: cloud.url } })
    userCount += 1
    const email = `verify-${userCount}@example.com`
    const id = await cloud.addUser(email, password, `Verifying user ${userCount}`)
    await cloud.app.services.licenses.setGifted(id, true)
    context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${relay.baseUrl}/api/unified-auth/cloud/login?returnTo=%2Fbackups`)
    await signInAtCloud(page, cloud, email)
    await page.getByTestId('backups-empty').waitFor()
    await page.getByRole('button', { name: 'Back up now' }).click()
    await expect.poll(() => activity(page).getAttribute('data-stage'), { timeout: 30_000 }).toBe('done')
    await expect.poll(() => rows(page).count()).toBe(1)
    return { relay, page }
  }

  async function relayOverview(target: RelayUnderTest): Promise<VerificationOverview> {
    const reply = await target.call<VerificationOverview>('GET', '/api/cloud-backups/verification')
    expect(reply.status).toBe(200)
    return reply.body
  }

  async function relayBackups(target: RelayUnderTest): Promise<RelayBackupList['backups']> {
    const reply = await target.call<RelayBackupList>('GET', '/api/cloud-backups/list')
    expect(reply.status).toBe(200)
    return reply.body.backups
  }

  const activity = (page: Page) => page.getByTestId('backup-activity')
  const rows = (page: Page) => page.getByTestId('backup-row')
  const rowNote = (page: Page) => rows(page).first().getByTestId('backup-verification')
  const themeApplied = (page: Page) => async (colorScheme: 'light' | 'dark') => {
    await page.waitForFunction((scheme) => document.documentElement.dataset.theme === scheme, colorScheme)
  }

  it('verifies a backup with Verify now, shows when in its row and the panel, and saves how often', async () => {
    const { relay, page } = await pageWithOneBackup()
    const panel = page.getByTestId('backup-verification-panel')
    expect(await rowNote(page).textContent()).toBe('Not verified yet')
    expect(await panel.getByTestId('verification-last').textContent()).toBe('None yet')
    expect(await page.getByLabel('Verify the newest backup').inputValue()).toBe('weekly')

    await rows(page)
      .first()
      .getByRole('button', { name: /^Verify now / })
      .click()
    await expect.poll(() => activity(page).getAttribute('data-kind')).toBe('verify')
    await expect.poll(() => activity(page).getAttribute('data-stage'), { timeout: 30_000 }).toBe('done')
    expect(await activity(page).textContent()).toContain('Backup verified')
    expect(await activity(page).textContent()).toContain('It can be restored')
    await expect.poll(() => rowNote(page).textContent()).toBe('Verified just now')
    expect(await rowNote(page).getAttribute('data-outcome')).toBe('ok')
    await expect.poll(() => panel.getByTestId('verification-last').textContent()).toBe('Verified just now')
    const [record] = await relayBackups(relay)
    expect(record?.verification).toMatchObject({ outcome: 'ok', error: null })

    await page.getByLabel('Verify the newest backup').selectOption('daily')
    await expect.poll(async () => (await relayOverview(relay)).settings.frequency).toBe('daily')
    await expect.poll(() => panel.getByTestId('verification-next').textContent()).toMatch(/^in 2[34] h$/)
    await page.getByLabel('Verify the newest backup').selectOption('off')
    await expect.poll(() => panel.getByTestId('verification-next').textContent()).toBe('Off')
    await page.reload()
    await rowNote(page).waitFor()
    expect(await page.getByLabel('Verify the newest backup').inputValue()).toBe('off')
    expect(await rowNote(page).textContent()).toBe('Verified just now')
    expect((await relayOverview(relay)).settings).toEqual({ frequency: 'off' })

    expect(await checkPageEverywhere(page, themeApplied(page))).toEqual([])
  })

  it('says what failed and what to do when a backup no longer matches what the cloud recorded', async () => {
    const { relay, page } = await pageWithOneBackup()
    const [record] = await relayBackups(relay)
    // The cloud's record now names other bytes than the stored file: the check must find the mismatch.
    await cloud.database.db
      .updateTable('backups')
      .set({ sha256: 'f'.repeat(64) })
      .where('id', '=', record?.id ?? '')
      .execute()

    await rows(page)
      .first()
      .getByRole('button', { name: /^Verify now / })
      .click()
    await expect.poll(() => activity(page).getAttribute('data-stage'), { timeout: 30_000 }).toBe('failed')
    expect(await activity(page).textContent()).toContain('Verification failed')
    expect(await activity(page).getByRole('alert').textContent()).toBe(
      'The downloaded backup does not match the size and checksum the cloud recorded. Make a new backup now.',
    )
    await expect
      .poll(() => rowNote(page).textContent())
      .toBe('Verification failed: The downloaded backup does not match the size and checksum the cloud recorded')
    expect(await rowNote(page).getAttribute('data-outcome')).toBe('failed')
    expect(await page.getByTestId('backup-verification-panel').getByTestId('verification-last').textContent()).toMatch(
      /^Failed just nowThe downloaded backup does not match/,
    )

    expect(await checkPageEverywhere(page, themeApplied(page))).toEqual([])
  })
})
