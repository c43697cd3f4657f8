import { randomUUID } from 'node:crypto'
import { defaultKeepPolicy, keepNothingMessage, MB, type RetentionReply } from '@relay/contracts'
import { checkPageEverywhere, chromiumProblem, requirement } from '@relay/testkit'
import type { Page, Request } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { themeApplied, useBackupsPage } from './backups-page'

const chromium = requirement('Chromium', chromiumProblem())

describe.skipIf(!chromium.available)('the keep policy of cloud backups in Chromium', () => {
  const suite = useBackupsPage()

  /** Backups in the cloud as if uploaded earlier, a day apart up to yesterday; sizes in MB, oldest first. */
  async function seedBackups(userId: string, backendId: string, sizes: number[]) {
    const now = Date.now()
    await suite.cloud.database.db
      .insertInto('backups')
      .values(
        sizes.map((size, i) => ({
          id: randomUUID(),
          user_id: userId,
          backend_id: backendId,
          filename: `relay-backup-seeded-${i}.zip`,
          s3_key: `backups/${userId}/${backendId}/seeded-${randomUUID()}.zip`,
          uncompressed_size: size * MB,
          compressed_size: size * MB,
          sha256: null,
          status: 'completed' as const,
          created_at: new Date(now - (sizes.length - i) * 86_400_000),
          expires_at: null,
        })),
      )
      .execute()
    // Written past the cloud's service: its status must not answer from before.
    suite.cloud.app.services.backups.forgetRecent()
  }

  function recordPuts(page: Page): Request[] {
    const puts: Request[] = []
    page.on('request', (request) => {
      if (request.method() === 'PUT' && new URL(request.url()).pathname === '/api/cloud-backups/retention') {
        puts.push(request)
      }
    })
    return puts
  }

  it('shows the projection, warns when the policy keeps more than fit, and saves an edited policy', async () => {
    const { relay, page, user } = await suite.connectedProRelay({ email: 'keeping@example.com', name: 'Keeping user' })

    const panel = page.getByTestId('keep-policy')
    const projection = page.getByTestId('keep-projection')
    await projection.waitFor()
    expect(await panel.getByRole('heading', { level: 2 }).textContent()).toBe('Keep policy')
    for (const [label, value] of [
      ['Newest backups', defaultKeepPolicy.keepLast],
      ['Daily', defaultKeepPolicy.keepDaily],
      ['Weekly', defaultKeepPolicy.keepWeekly],
      ['Monthly', defaultKeepPolicy.keepMonthly],
    ] as const) {
      expect(await panel.getByLabel(label).inputValue(), label).toBe(String(value))
    }
    expect(await projection.textContent()).toBe(
      'This relay has no backup in the cloud yet; after its first, this shows how many fit. Your policy keeps up to 14.',
    )

    // This relay's newest backup is 40 MB and another relay uses 100 MB: 9 fit beside the next upload.
    const { backendId } = (await relay.call<{ backendId: string }>('GET', '/api/health')).body
    await seedBackups(user.id, backendId, [40, 40])
    await seedBackups(user.id, 'another-relay', [100])
    await page.reload()
    await expect.poll(() => projection.getAttribute('data-state')).toBe('exceeds')
    expect(await projection.textContent()).toBe(
      'The policy keeps more backups than fit in the quota. At 40.0 MB a backup, 9 backups of this relay fit beside ' +
        'the next upload; your policy keeps up to 14. Each new backup will delete older ones the policy keeps: keep ' +
        'fewer backups or leave components out of the backup settings; other relays of the account use 100.0 MB.',
    )
    await page.setViewportSize({ width: 390, height: 844 })
    await panel.scrollIntoViewIfNeeded()
    expect(await checkPageEverywhere(page, themeApplied(page))).toEqual([])

    // Out of range, and a policy that keeps nothing: said at once, nothing sent.
    const puts = recordPuts(page)
    const save = panel.getByRole('button', { name: 'Save keep policy' })
    await panel.getByLabel('Monthly').fill('101')
    await save.click()
    expect(await page.getByTestId('keepMonthly-error').textContent()).toBe('Enter a whole number from 0 to 100')
    expect(await panel.getByLabel('Monthly').getAttribute('aria-invalid')).toBe('true')
    for (const label of ['Newest backups', 'Daily', 'Weekly', 'Monthly']) {
      await panel.getByLabel(label).fill('0')
    }
    expect(await page.getByTestId('keepMonthly-error').count()).toBe(0)
    await save.click()
    expect(await page.getByTestId('keep-policy-error').textContent()).toBe(`Not saved${keepNothingMessage}`)
    expect(puts).toEqual([])

    await panel.getByLabel('Newest backups').fill('2')
    await panel.getByLabel('Daily').fill('3')
    await save.click()
    await expect.poll(() => page.getByTestId('keep-policy-status').textContent()).toBe('Keep policy saved')
    expect(puts.map((put) => put.postDataJSON())).toEqual([
      { keepLast: 2, keepDaily: 3, keepWeekly: 0, keepMonthly: 0 },
    ])
    expect(await page.getByTestId('keep-policy-error').count()).toBe(0)
    await expect.poll(() => projection.getAttribute('data-state')).toBe('fits')
    expect(await projection.textContent()).toBe(
      'At 40.0 MB a backup, 9 backups of this relay fit beside the next upload; your policy keeps up to 3.',
    )
    const stored = await relay.call<RetentionReply>('GET', '/api/cloud-backups/retention')
    expect(stored.body.policy).toEqual({ keepLast: 2, keepDaily: 3, keepWeekly: 0, keepMonthly: 0 })

    await page.reload()
    await expect.poll(() => panel.getByLabel('Daily').inputValue()).toBe('3')
    expect(await panel.getByLabel('Newest backups').inputValue()).toBe('2')
    expect(await panel.getByLabel('Monthly').inputValue()).toBe('0')
    await page.setViewportSize({ width: 1440, height: 900 })
    expect(await checkPageEverywhere(page, themeApplied(page))).toEqual([])
  })
})
