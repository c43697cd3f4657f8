import type { VerificationOverview } from '@relay/contracts'
import { checkPageEverywhere, chromiumProblem, requirement } from '@relay/testkit'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { relayBackups, themeApplied, useBackupsPage } from './backups-page'
import type { RelayUnderTest } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

describe.skipIf(!chromium.available)('backup verification on the cloud backups page in Chromium', () => {
  const suite = useBackupsPage()
  let userCount = 0

  /** A relay connected to a new Pro account, with the browser on its Backups page and one backup made there. */
  async function pageWithOneBackup(): Promise<{ relay: RelayUnderTest; page: Page }> {
    userCount += 1
    const { relay, page } = await suite.connectedProRelay({
      email: `verify-${userCount}@example.com`,
      name: `Verifying user ${userCount}`,
    })
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

  const activity = (page: Page) => page.getByTestId('backup-activity')
  const rows = (page: Page) => page.getByTestId('backup-row')
  const rowNote = (page: Page) => rows(page).first().getByTestId('backup-verification')

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
    await suite.cloud.database.db
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
