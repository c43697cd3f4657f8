import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { BackupOperation, BackupStatusReply, OperationStarted } from '@relay/contracts'
import { chromiumProblem, defined, requirement } from '@relay/testkit'
import type { Page, Request } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestCloud } from '../../cloud/test/cloud-server.js'
import { backOnBackups, type CloudAccount, relayBackups, useBackupsPage } from './backups-page'
import { signInAtCloud } from './cloud-sign-in'
import type { RelayUnderTest } from './relay-under-test'
import { startCloudWithUploadGate } from './upload-gate'

const chromium = requirement('Chromium', chromiumProblem())

describe.skipIf(!chromium.available)('cloud backups page in Chromium', () => {
  const suite = useBackupsPage()
  let userCount = 0
  // Backups watched while they run go to this cloud, whose uploads the test holds until it has looked.
  let gated: Awaited<ReturnType<typeof startCloudWithUploadGate>>
  beforeAll(async () => {
    gated = await startCloudWithUploadGate()
  })
  afterAll(async () => {
    await gated?.cloud.close()
  })

  /** A cloud account of its own for each test, so quotas and settings never carry over. */
  function nextAccount(): CloudAccount {
    userCount += 1
    return { email: `backups-${userCount}@example.com`, name: `Backup user ${userCount}` }
  }

  async function relayStatus(target: RelayUnderTest): Promise<BackupStatusReply> {
    const reply = await target.call<BackupStatusReply>('GET', '/api/cloud-backups/status')
    expect(reply.status).toBe(200)
    return reply.body
  }

  /**
   * Incompressible frame-engine files: the archive then takes long enough to pack and upload that its
   * progress can be watched.
   */
  function addFrameEngineData(target: RelayUnderTest, megabytes: number) {
    const folder = path.join(target.dataDir, 'frame-engine')
    mkdirSync(folder, { recursive: true })
    writeFileSync(path.join(folder, 'frames.bin'), randomBytes(megabytes * 1024 * 1024))
  }

  /** Every answer to a poll of one operation, in order: what the page saw of its progress. */
  function recordOperationPolls(page: Page): { at: number; operation: BackupOperation }[] {
    const polls: { at: number; operation: BackupOperation }[] = []
    page.on('response', async (response) => {
      if (/\/api\/cloud-backups\/operations\/[^/]+$/.test(new URL(response.url()).pathname)) {
        polls.push({ at: Date.now(), operation: (await response.json()) as BackupOperation })
      }
    })
    return polls
  }

  function recordBackupCalls(page: Page): Request[] {
    const calls: Request[] = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/api/cloud-backups/')) {
        calls.push(request)
      }
    })
    return calls
  }

  const activity = (page: Page) => page.getByTestId('backup-activity')
  const rows = (page: Page) => page.getByTestId('backup-row')

  it('asks to connect the relay first, then explains the Pro license to an account without one', async () => {
    const relay = await suite.startRelay()
    const user = await suite.addCloudUser({ ...nextAccount(), pro: false })
    const page = await suite.newPage()
    const calls = recordBackupCalls(page)

    await page.goto(`${relay.baseUrl}/dashboard`)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Backups' }).click()
    const notConnected = page.getByTestId('backups-not-connected')
    await notConnected.waitFor()
    expect(await page.title()).toBe('Cloud backups · Relay')
    expect(await notConnected.getByRole('heading').textContent()).toBe('Connect the relay to Relay Cloud')
    expect(await notConnected.getByRole('link', { name: 'Cloud connection settings' }).getAttribute('href')).toBe(
      '/settings/account',
    )
    // Nothing that needs the cloud is offered.
    expect(await page.getByRole('button', { name: 'Back up now' }).count()).toBe(0)
    // Not connected is an answer, not a failure to retry: the relay was asked once.
    expect(calls.map((call) => new URL(call.url()).pathname)).toEqual(['/api/cloud-backups/status'])
    // And not a signed-out browser: the app stays open.
    expect(await page.getByRole('heading', { level: 1, name: 'Cloud backups' }).count()).toBe(1)

    await notConnected.getByRole('button', { name: 'Connect to cloud' }).click()
    await signInAtCloud(page, suite.cloud, user.email)
    await backOnBackups(page, relay)

    const gate = page.getByTestId('backups-pro-gate')
    await gate.waitFor()
    expect(await gate.getByRole('heading').textContent()).toBe('Cloud backups need a Pro license')
    expect(await gate.textContent()).toContain(user.email)
    for (const absent of [
      page.getByRole('button', { name: 'Back up now' }),
      page.getByTestId('backup-settings'),
      page.getByTestId('backups-table'),
      page.getByTestId('backups-empty'),
    ]) {
      expect(await absent.count()).toBe(0)
    }
    // The list needs a license: the page never asks for it.
    expect(calls.some((call) => new URL(call.url()).pathname === '/api/cloud-backups/list')).toBe(false)
    expect((await relayStatus(relay)).hasValidLicense).toBe(false)

    // The account gets Pro; the page unlocks when asked again.
    await suite.cloud.app.services.licenses.setGifted(user.id, true)
    await gate.getByRole('button', { name: 'Check again' }).click()
    await page.getByTestId('backup-settings').waitFor()
    expect(await page.getByTestId('backups-pro-gate').count()).toBe(0)
    await page.getByTestId('backups-empty').waitFor()
  })

  it('saves each setting as it changes, keeps them after a reload, and refuses a retention out of range', async () => {
    const { relay, page } = await suite.connectedProRelay(nextAccount())
    const settings = page.getByTestId('backup-settings')
    const saved = page.getByTestId('settings-status')
    await settings.waitFor()
    expect(await page.getByTestId('backup-enabled').textContent()).toBe('Off')

    const autoBackups = page.getByRole('switch', { name: 'Back up automatically' })
    expect(await autoBackups.isChecked()).toBe(false)
    await autoBackups.check()
    await expect.poll(() => saved.getAttribute('data-state')).toBe('saved')
    expect(await saved.textContent()).toBe('All changes saved')
    expect((await relayStatus(relay)).settings.enabled).toBe(true)
    expect(await page.getByTestId('backup-enabled').textContent()).toBe('On')
    expect(await page.getByTestId('backup-next').textContent()).toBe('Within 15 minutes')

    await page.getByLabel('Frequency').selectOption('weekly')
    await expect.poll(async () => (await relayStatus(relay)).settings.frequency).toBe('weekly')

    const keysNote = page.getByTestId('keys-note')
    expect(await keysNote.textContent()).toContain('only ciphertext')
    await page.getByRole('checkbox', { name: 'Encryption keys' }).check()
    await expect.poll(async () => (await relayStatus(relay)).settings.includeKeys).toBe(true)
    expect(await keysNote.textContent()).toContain('anyone who holds the backup file can decrypt')
    await page.getByRole('checkbox', { name: 'Relay identity' }).uncheck()
    await expect.poll(async () => (await relayStatus(relay)).settings.includeIdentity).toBe(false)

    const retention = page.getByLabel('Keep each backup for')
    const retentionError = page.getByTestId('retention-error')
    const settingsPosts = recordBackupCalls(page)
    for (const bad of ['0', '400']) {
      await retention.fill(bad)
      await retention.press('Enter')
      await retentionError.waitFor()
      expect(await retentionError.textContent()).toBe('Enter a whole number of days from 1 to 365')
      expect(await retention.getAttribute('aria-invalid')).toBe('true')
    }
    // Checked here: neither value reached the relay.
    expect(settingsPosts.filter((call) => call.method() === 'POST')).toEqual([])
    expect((await relayStatus(relay)).settings.retentionDays).toBe(30)

    await retention.fill('14')
    expect(await retentionError.count()).toBe(0)
    await retention.blur()
    await expect.poll(async () => (await relayStatus(relay)).settings.retentionDays).toBe(14)
    const posted = settingsPosts.filter((call) => call.method() === 'POST').map((call) => call.postDataJSON())
    expect(posted).toEqual([{ retentionDays: 14 }])
    await expect.poll(() => page.getByTestId('backup-retention').textContent()).toBe('14 days')

    await page.reload()
    await settings.waitFor()
    expect(await page.getByRole('switch', { name: 'Back up automatically' }).isChecked()).toBe(true)
    expect(await page.getByLabel('Frequency').inputValue()).toBe('weekly')
    expect(await page.getByLabel('Keep each backup for').inputValue()).toBe('14')
    expect(await page.getByRole('checkbox', { name: 'Encryption keys' }).isChecked()).toBe(true)
    expect(await page.getByRole('checkbox', { name: 'Relay identity' }).isChecked()).toBe(false)
    expect(await page.getByRole('checkbox', { name: 'Frame engine data' }).isChecked()).toBe(true)
    expect(await page.getByTestId('backup-frequency').textContent()).toBe('Weekly')
    expect(await page.getByTestId('backup-included').textContent()).toBe('Database, encryption keys, frame engine data')
    expect((await relayStatus(relay)).settings).toMatchObject({
      enabled: true,
      frequency: 'weekly',
      retentionDays: 14,
      includeKeys: true,
      includeIdentity: false,
      includeFrameEngine: true,
    })
  })

  it('backs up now with live progress, downloads, restores with a confirmation and deletes the backup', async () => {
    const { relay, page } = await suite.connectedProRelay({ ...nextAccount(), cloud: gated.cloud })
    await relay.createCollector(collector('made before the backup'))
    addFrameEngineData(relay, 32)
    const polls = recordOperationPolls(page)
    await page.getByTestId('backups-empty').waitFor()
    expect(await page.getByTestId('backup-last').textContent()).toBe('None yet')

    gated.hold()
    await page.getByRole('button', { name: 'Back up now' }).click()
    const progress = page.getByRole('progressbar', { name: 'Backup progress' })
    await progress.waitFor()
    expect(await page.getByTestId('activity-stage').textContent()).toMatch(/^Step [1-5] of 5: /)
    expect(await page.getByRole('button', { name: 'Back up now' }).isDisabled()).toBe(true)
    await expect.poll(() => activity(page).getAttribute('data-stage'), { timeout: 30_000 }).toBe('uploading')
    expect(await page.getByTestId('activity-stage').textContent()).toBe('Step 4 of 5: Uploading to Relay Cloud')
    gated.release()
    await expect.poll(() => activity(page).getAttribute('data-stage'), { timeout: 30_000 }).toBe('done')
    expect(await activity(page).textContent()).toContain('Backup complete')
    expect(await page.getByRole('progressbar').count()).toBe(0)

    // The page followed the stages in order, polling about twice a second, and saw bytes move.
    const stages = [...new Set(polls.map((poll) => poll.operation.stage))]
    const order = ['queued', 'snapshot', 'packing', 'uploading', 'confirming', 'done']
    expect(stages).toEqual(expect.arrayContaining(['uploading', 'done']))
    expect(stages.map((stage) => order.indexOf(stage))).toEqual(
      [...stages.map((stage) => order.indexOf(stage))].sort((a, b) => a - b),
    )
    expect(stages.at(-1)).toBe('done')
    expect(polls.some((poll) => poll.operation.bytesTotal > 0 && poll.operation.bytesDone > 0)).toBe(true)
    // While it ran; the finished operation is read once more when the page refreshes after it.
    const running = polls.slice(0, polls.findIndex((poll) => poll.operation.stage === 'done') + 1)
    const gaps = running.slice(1).map((poll, index) => poll.at - (running[index]?.at ?? 0))
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(300)

    // The new backup is in the table, and the status says when it ran.
    await expect.poll(() => rows(page).count()).toBe(1)
    const [record] = await relayBackups(relay)
    const operation = defined(polls.at(-1)).operation
    expect(record).toMatchObject({ id: operation.backupId, status: 'completed', filename: operation.filename })
    expect(await rows(page).first().getAttribute('data-id')).toBe(record?.id)
    expect(await rows(page).first().getByTestId('backup-status').textContent()).toBe('Completed')
    expect(await rows(page).first().getByTestId('backup-size').textContent()).toMatch(/^3\d MB/)
    expect(await rows(page).first().getByTestId('backup-expires').textContent()).toMatch(/\d/)
    await expect.poll(() => page.getByTestId('backup-last').textContent()).toMatch(/^just now/)
    const storage = page.getByTestId('usage-storage').locator('meter')
    expect(Number(await storage.getAttribute('value'))).toBe(record?.compressedSize)

    const downloading = page.waitForEvent('download')
    await rows(page)
      .first()
      .getByRole('link', { name: /^Download / })
      .click()
    const download = await downloading
    expect(download.suggestedFilename()).toBe(record?.filename)
    expect(readFileSync(defined(await download.path())).length).toBe(record?.compressedSize)

    await relay.createCollector(collector('made after the backup'))

    // The dialog says what a restore does; Escape leaves everything as it was.
    await rows(page)
      .first()
      .getByRole('button', { name: /^Restore / })
      .click()
    const dialog = page.getByRole('dialog', { name: 'Restore this backup?' })
    await dialog.waitFor()
    expect(await dialog.textContent()).toContain("The relay's current database is replaced by the one in this backup")
    expect(await dialog.textContent()).toContain('safety copy of the current database')
    expect(await dialog.textContent()).toContain(record?.filename)
    expect(await dialog.getByRole('button', { name: 'Cancel' }).evaluate((el) => el === document.activeElement)).toBe(
      true,
    )
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    const afterEscape = await relay.call<{ operations: BackupOperation[] }>('GET', '/api/cloud-backups/operations')
    expect(afterEscape.body.operations.map((op) => op.kind)).toEqual(['backup'])

    await rows(page)
      .first()
      .getByRole('button', { name: /^Restore / })
      .click()
    await dialog.waitFor()
    await dialog.getByRole('checkbox', { name: 'Relay identity' }).uncheck()
    const restoreRequest = page.waitForRequest((request) => request.url().endsWith('/restore'))
    await dialog.getByRole('button', { name: 'Restore and replace the database' }).click()
    expect((await restoreRequest).postDataJSON()).toEqual({
      includeKeys: true,
      includeIdentity: false,
      includeFrameEngine: true,
    })
    await dialog.waitFor({ state: 'hidden' })
    await expect.poll(() => activity(page).getAttribute('data-kind')).toBe('restore')
    await expect.poll(() => activity(page).getAttribute('data-stage'), { timeout: 30_000 }).toBe('done')
    expect(await activity(page).textContent()).toContain('Backup restored')
    expect(await activity(page).textContent()).toContain('safety copy')
    const restoreStages = new Set(
      polls.filter((poll) => poll.operation.kind === 'restore').map((poll) => poll.operation.stage),
    )
    expect(restoreStages.has('done')).toBe(true)
    expect(restoreStages.size).toBeGreaterThan(1)

    // The relay runs on the backup: the collector made after it is gone.
    expect((await relay.collectors()).map((c) => c.name)).toEqual(['made before the backup'])

    await rows(page)
      .first()
      .getByRole('button', { name: /^Delete / })
      .click()
    await rows(page)
      .first()
      .getByRole('button', { name: /^Yes, delete / })
      .click()
    await page.getByTestId('backups-empty').waitFor()
    expect(await rows(page).count()).toBe(0)
    expect(await relayBackups(relay)).toEqual([])
  })

  it('says why a backup failed, and lists nothing for it', async () => {
    const { relay, page } = await suite.connectedProRelay(nextAccount())
    await page.getByTestId('backups-empty').waitFor()
    // Incompressible, so the archive stays over the cloud's 50 MB limit for one backup.
    addFrameEngineData(relay, 52)

    await page.getByRole('button', { name: 'Back up now' }).click()
    await expect.poll(() => activity(page).getAttribute('data-stage'), { timeout: 30_000 }).toBe('failed')
    expect(await activity(page).getByRole('alert').textContent()).toMatch(
      /^This backup is 5\d\.\d MB, over the cloud's limit of 50\.0 MB for one backup: leave components such as the frame engine data out/,
    )
    expect(await activity(page).textContent()).toContain('Backup failed')
    expect(await page.getByRole('button', { name: 'Back up now' }).isEnabled()).toBe(true)
    expect(await rows(page).count()).toBe(0)
    expect(await relayBackups(relay)).toEqual([])

    await activity(page).getByRole('button', { name: 'Dismiss' }).click()
    expect(await activity(page).count()).toBe(0)
  })

  it('says so when Relay Cloud cannot be reached, and offers to try again', async () => {
    // A cloud of its own, so stopping it leaves the other tests' cloud alone.
    const ownCloud = await startTestCloud('pglite')
    try {
      const { page } = await suite.connectedProRelay({
        email: 'offline@example.com',
        name: 'Offline',
        cloud: ownCloud,
      })
      await page.getByTestId('backups-empty').waitFor()

      await ownCloud.app.close()
      await page.reload()
      const problem = page.getByTestId('backups-error')
      await problem.waitFor({ timeout: 15_000 })
      expect(await problem.textContent()).toContain('Could not load your cloud backups')
      expect(await page.getByTestId('backups-not-connected').count()).toBe(0)
      expect(await page.getByRole('button', { name: 'Back up now' }).count()).toBe(0)
      expect(await problem.textContent()).toMatch(/unreachable/i)

      const statusCalls = recordBackupCalls(page)
      await problem.getByRole('button', { name: 'Try again' }).click()
      await expect.poll(() => statusCalls.length).toBeGreaterThan(0)
      await expect.poll(() => problem.getByRole('button', { name: 'Try again' }).isEnabled()).toBe(true)
      expect(await problem.textContent()).toMatch(/unreachable/i)
    } finally {
      await ownCloud.close().catch(() => undefined)
    }
  })

  it('shows the progress of a backup that was already running when the page opened', async () => {
    const { relay, page } = await suite.connectedProRelay({ ...nextAccount(), cloud: gated.cloud })
    await page.getByTestId('backups-empty').waitFor()
    addFrameEngineData(relay, 45)

    gated.hold()
    const started = await relay.call<OperationStarted>('POST', '/api/cloud-backups/create')
    expect(started.status).toBe(202)
    await page.reload()

    await expect.poll(() => activity(page).getAttribute('data-kind')).toBe('backup')
    expect(await page.getByRole('progressbar', { name: 'Backup progress' }).count()).toBe(1)
    expect(await page.getByRole('button', { name: 'Back up now' }).isDisabled()).toBe(true)
    gated.release()
    await expect.poll(() => activity(page).getAttribute('data-stage'), { timeout: 30_000 }).toBe('done')
    await expect.poll(() => rows(page).count()).toBe(1)
    const [record] = await relayBackups(relay)
    const finished = await relay.call<BackupOperation>(
      'GET',
      `/api/cloud-backups/operations/${started.body.operationId}`,
    )
    expect(record?.id).toBe(finished.body.backupId)
    expect(await page.getByRole('button', { name: 'Back up now' }).isEnabled()).toBe(true)
  })
})

function collector(name: string) {
  return { name, collectorType: 'Virtual', pollRateMs: 60_000, settings: { sensorCount: 2 } } as const
}
