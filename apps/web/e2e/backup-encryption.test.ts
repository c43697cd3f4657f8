import type { BackupEncryptionStatus, BackupList, BackupOperation } from '@relay/contracts'
import { checkPageEverywhere, chromiumProblem, requirement } from '@relay/testkit'
import type { Page, Request } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { themeApplied, useBackupsPage } from './backups-page'
import type { RelayUnderTest } from './relay-under-test'

const chromium = requirement('Chromium', chromiumProblem())

const passphrase = 'maple lantern 7 quiet harbor'
const lossWarning = 'If you lose this passphrase, your encrypted backups cannot be restored by anyone, including us.'

describe.skipIf(!chromium.available)('backup encryption in Chromium', () => {
  const suite = useBackupsPage()

  function recordCalls(page: Page, pathname: string): Request[] {
    const calls: Request[] = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === pathname && request.method() !== 'GET') {
        calls.push(request)
      }
    })
    return calls
  }

  async function encryptionOf(target: RelayUnderTest): Promise<BackupEncryptionStatus> {
    return (await target.call<BackupEncryptionStatus>('GET', '/api/cloud-backups/encryption')).body
  }

  const activity = (page: Page) => page.getByTestId('backup-activity')
  const rows = (page: Page) => page.getByTestId('backup-row')

  it('sets a passphrase, backs up encrypted, and restores with the passphrase typed in once it is removed', async () => {
    const { relay, page } = await suite.connectedProRelay({ email: 'encrypting@example.com', name: 'Encrypting user' })
    const panel = page.getByTestId('backup-encryption')
    const state = page.getByTestId('encryption-state')
    await page.getByTestId('backups-empty').waitFor()
    await panel.getByRole('form', { name: 'Set a backup passphrase' }).waitFor()
    expect(await state.getAttribute('data-enabled')).toBe('false')
    expect(await state.textContent()).toContain('New backups are sent unencrypted')
    expect(await page.getByTestId('passphrase-warning').textContent()).toContain(lossWarning)
    expect(await checkPageEverywhere(page, themeApplied(page))).toEqual([])

    // What the relay would refuse is said here, and never sent.
    const puts = recordCalls(page, '/api/cloud-backups/encryption')
    const field = panel.getByLabel('Passphrase', { exact: true })
    const confirm = panel.getByLabel('Confirm passphrase')
    await field.fill('too short')
    await panel.getByRole('button', { name: 'Set passphrase' }).click()
    expect(await page.getByTestId('passphrase-error').textContent()).toBe('Use at least 12 characters')
    expect(await field.getAttribute('aria-invalid')).toBe('true')
    await field.fill(passphrase)
    await confirm.fill(`${passphrase}!`)
    await panel.getByRole('button', { name: 'Set passphrase' }).click()
    expect(await page.getByTestId('confirm-error').textContent()).toBe('The two passphrases differ')
    expect(puts).toEqual([])

    await confirm.fill(passphrase)
    await panel.getByRole('button', { name: 'Set passphrase' }).click()
    await expect.poll(() => state.getAttribute('data-enabled')).toBe('true')
    expect(await state.textContent()).toContain('New backups are encrypted with your passphrase')
    expect(await field.count()).toBe(0)
    expect(puts.map((put) => put.postDataJSON())).toEqual([{ passphrase }])
    expect(await encryptionOf(relay)).toMatchObject({ enabled: true })

    await relay.createCollector(collector('made before the backup'))
    await page.getByRole('button', { name: 'Back up now' }).click()
    await expect.poll(() => activity(page).getAttribute('data-stage'), { timeout: 30_000 }).toBe('done')
    await expect.poll(() => rows(page).count()).toBe(1)
    const [record] = (await relay.call<BackupList>('GET', '/api/cloud-backups/list')).body.backups
    expect(record?.filename).toMatch(/\.encrypted\.zip$/)
    const row = rows(page).first()
    expect(await row.getByTestId('backup-encrypted').textContent()).toBe('Encrypted')
    expect(await checkPageEverywhere(page, themeApplied(page))).toEqual([])

    // With the relay's passphrase, the field may stay empty.
    await row.getByRole('button', { name: /^Restore / }).click()
    const dialog = page.getByRole('dialog', { name: 'Restore this backup?' })
    await dialog.waitFor()
    expect(await dialog.getByLabel('Backup passphrase').getAttribute('aria-describedby')).toBeTruthy()
    expect(await dialog.textContent()).toContain("Leave empty to use this relay's passphrase")
    expect(await checkPageEverywhere(page, themeApplied(page))).toEqual([])
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })

    await panel.getByRole('button', { name: 'Remove passphrase' }).click()
    await panel.getByRole('button', { name: 'Yes, remove it' }).click()
    await expect.poll(() => state.getAttribute('data-enabled')).toBe('false')
    expect(await encryptionOf(relay)).toEqual({ success: true, enabled: false, setAt: null })
    await relay.createCollector(collector('made after the backup'))

    // Now the backup needs its passphrase: asked for before anything is sent.
    const restores = recordCalls(page, `/api/cloud-backups/${record?.id}/restore`)
    await row.getByRole('button', { name: /^Restore / }).click()
    await dialog.waitFor()
    expect(await dialog.textContent()).toContain('this relay has no passphrase set')
    await dialog.getByRole('button', { name: 'Restore and replace the database' }).click()
    expect(await dialog.getByTestId('restore-passphrase-error').textContent()).toBe(
      'Enter the passphrase this backup was made with',
    )
    expect(restores).toEqual([])

    // A wrong one: the restore fails, says why, and changes nothing.
    await dialog.getByLabel('Backup passphrase').fill('maple lantern 7 quiet harbour')
    await dialog.getByRole('button', { name: 'Restore and replace the database' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await expect.poll(() => activity(page).getAttribute('data-stage'), { timeout: 30_000 }).toBe('failed')
    expect(await activity(page).getByRole('alert').textContent()).toBe(
      'The passphrase does not open this backup: it was encrypted with a different passphrase' +
        ' Nothing was changed: the relay still runs on its own database.',
    )
    expect((await relay.collectors()).map((c) => c.name)).toEqual(['made before the backup', 'made after the backup'])
    await activity(page).getByRole('button', { name: 'Dismiss' }).click()

    await row.getByRole('button', { name: /^Restore / }).click()
    await dialog.waitFor()
    await dialog.getByLabel('Backup passphrase').fill(passphrase)
    await dialog.getByRole('button', { name: 'Restore and replace the database' }).click()
    await expect.poll(() => activity(page).getAttribute('data-kind')).toBe('restore')
    await expect.poll(() => activity(page).getAttribute('data-stage'), { timeout: 30_000 }).toBe('done')
    expect(restores.map((request) => request.postDataJSON())).toEqual([
      {
        includeKeys: true,
        includeIdentity: true,
        includeFrameEngine: true,
        passphrase: 'maple lantern 7 quiet harbour',
      },
      { includeKeys: true, includeIdentity: true, includeFrameEngine: true, passphrase },
    ])
    expect((await relay.collectors()).map((c) => c.name)).toEqual(['made before the backup'])
    // The restore kept the relay's own setting: still no passphrase.
    await expect.poll(() => state.getAttribute('data-enabled')).toBe('false')
    const operations = (await relay.call<{ operations: BackupOperation[] }>('GET', '/api/cloud-backups/operations'))
      .body.operations
    expect(operations.map((operation) => [operation.kind, operation.stage])).toEqual([
      ['restore', 'done'],
      ['restore', 'failed'],
      ['backup', 'done'],
    ])
  })
})

function collector(name: string) {
  return { name, collectorType: 'Virtual', pollRateMs: 60_000, settings: { sensorCount: 2 } } as const
}
