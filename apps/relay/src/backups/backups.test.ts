import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import type { BackupRecord } from '@relay/contracts'
import { createTestClock, defined } from '@relay/testkit'
import SQLite from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import {
  addCollector,
  backUp,
  cloudNotificationTitles,
  collectorNames,
  listBackups,
  listedBackup,
  restoreBackup,
  signedInRelay,
  tamperWithStoredObject,
  tempFiles,
  useCloud,
  waitForOperation,
} from '../../test/backups.js'
import { startLinkedRelay } from '../../test/cloud.js'
import { useCloudBehindFaultProxy } from '../../test/cloud-behind-proxy.js'
import type { RelayApp } from '../app.js'

const json = { 'content-type': 'application/json' }

async function saveSettings(app: RelayApp, change: object) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/cloud-backups/settings',
    headers: json,
    payload: JSON.stringify(change),
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().settings
}

/** A change to the relay's own settings: something a backup has to store. */
async function changeSettings(app: RelayApp, failuresBeforeFailing: number) {
  const res = await app.inject({
    method: 'PUT',
    url: '/api/sources/health-settings',
    headers: json,
    payload: JSON.stringify({ failuresBeforeFailing }),
  })
  expect(res.statusCode, res.body).toBe(200)
}

describe('relay cloud backups against the real cloud and its object store', () => {
  const suite = useCloud()

  it('backs up on demand: snapshot, pack, upload, confirm, with progress and a notification', async () => {
    const relay = await signedInRelay(suite.cloud)
    await addCollector(relay.app, 'boiler room')
    const operation = await backUp(relay.app)
    expect(operation).toMatchObject({ kind: 'backup', trigger: 'manual', stage: 'done', error: null })
    expect(operation.filename).toMatch(/^relay-backup-\d{8}T\d{6}Z\.zip$/)
    const [record, ...rest] = await listBackups(relay.app)
    expect(rest).toEqual([])
    expect(record).toMatchObject({ id: operation.backupId, status: 'completed', filename: operation.filename })
    const status = (await relay.app.inject({ url: '/api/cloud-backups/status' })).json()
    expect(status.settings.lastBackup).toEqual(expect.any(String))
    expect(status.lastBackup.id).toBe(operation.backupId)
    expect(await cloudNotificationTitles(relay.app)).toEqual(['Backup complete'])
    expect(tempFiles(relay)).toEqual([])

    // The relay streams the object back; it is the file the cloud recorded.
    const download = await relay.app.inject({ url: `/api/cloud-backups/${defined(record).id}/download` })
    expect(download.statusCode).toBe(200)
    expect(download.headers['content-disposition']).toBe(`attachment; filename="${operation.filename}"`)
    expect(createHash('sha256').update(download.rawPayload).digest('hex')).toBe(record?.sha256)
    // Keys are not in a backup unless the settings include them: the archive holds only ciphertext.
    expect(download.rawPayload.includes(Buffer.from('keys/secrets.key'))).toBe(false)
    expect(download.rawPayload.includes(Buffer.from('identity.json'))).toBe(true)
  })

  it('runs one backup at a time and answers a second request with 409', async () => {
    const relay = await signedInRelay(suite.cloud)
    const first = await relay.app.inject({ method: 'POST', url: '/api/cloud-backups/create' })
    expect(first.statusCode).toBe(202)
    const second = await relay.app.inject({ method: 'POST', url: '/api/cloud-backups/create' })
    expect(second.statusCode).toBe(409)
    expect(second.json()).toMatchObject({ code: 'CONFLICT', error: expect.stringMatching(/already running/) })
    expect((await waitForOperation(relay.app, first.json().operationId)).stage).toBe('done')
  })

  it('refuses a manual backup without a cloud session (401) or a license (403), leaving nothing behind', async () => {
    const unsigned = await startLinkedRelay(suite.cloud)
    const res = await unsigned.app.inject({ method: 'POST', url: '/api/cloud-backups/create' })
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({
      success: false,
      code: 'CLOUD_NOT_AUTHENTICATED',
      error: 'Backend is not authenticated with the cloud',
    })
    expect((await unsigned.app.inject({ url: '/api/cloud-backups/status' })).statusCode).toBe(401)

    const unlicensed = await signedInRelay(suite.cloud, { licensed: false })
    const refused = await unlicensed.app.inject({ method: 'POST', url: '/api/cloud-backups/create' })
    expect(refused.statusCode).toBe(403)
    expect(refused.json()).toMatchObject({
      code: 'LICENSE_REQUIRED',
      error: 'Cloud backups require a valid Pro license',
    })
    expect(tempFiles(unlicensed)).toEqual([])
    expect(await cloudNotificationTitles(unlicensed.app)).toEqual([])
  })

  it('skips scheduled cycles for each reason, logging each reason once', async () => {
    const clock = createTestClock(new Date())
    const unsigned = await startLinkedRelay(suite.cloud, { clock })
    const backups = unsigned.app.services.backups
    expect(await backups.runScheduledCycle()).toBe('skipped')
    expect(await backups.runScheduledCycle()).toBe('skipped')
    const skipLines = (logs: string[], reason: string) =>
      logs.filter((line) => line.includes('scheduled backup skipped') && line.includes(`"reason":"${reason}"`))
    expect(skipLines(unsigned.logs, 'no-session')).toHaveLength(1)

    const unlicensed = await signedInRelay(suite.cloud, { licensed: false, clock })
    expect(await unlicensed.app.services.backups.runScheduledCycle()).toBe('skipped')
    expect(await unlicensed.app.services.backups.runScheduledCycle()).toBe('skipped')
    expect(skipLines(unlicensed.logs, 'no-license')).toHaveLength(1)

    const disabled = await signedInRelay(suite.cloud, { clock })
    expect(await disabled.app.services.backups.runScheduledCycle()).toBe('skipped')
    expect(await disabled.app.services.backups.runScheduledCycle()).toBe('skipped')
    expect(skipLines(disabled.logs, 'disabled')).toHaveLength(1)
    for (const relay of [unsigned, unlicensed, disabled]) {
      expect(await listBackupsOrNone(relay.app)).toEqual([])
      expect(tempFiles(relay)).toEqual([])
      expect(await cloudNotificationTitles(relay.app)).toEqual([])
    }
  })

  it('backs up when due: at once without a last backup, then at each frequency boundary', async () => {
    const clock = createTestClock(new Date())
    const relay = await signedInRelay(suite.cloud, { clock })
    const backups = relay.app.services.backups
    await saveSettings(relay.app, { enabled: true, frequency: 'daily' })
    expect(await backups.runScheduledCycle()).toBe('ran')
    const [first] = await listBackups(relay.app)
    expect(first).toMatchObject({ status: 'completed' })

    for (const [index, [frequency, days]] of (
      [
        ['daily', 1],
        ['weekly', 7],
        ['monthly', 30],
      ] as const
    ).entries()) {
      // Something to back up: a scheduled backup that would store the same content again is skipped.
      await changeSettings(relay.app, index + 2)
      const settings = await saveSettings(relay.app, { frequency })
      const last = new Date(defined(settings.lastBackup)).getTime()
      clock.set(new Date(last + days * 24 * 60 * 60 * 1000 - 1))
      expect(await backups.runScheduledCycle(), `${frequency} a moment early`).toBe('skipped')
      clock.set(new Date(last + days * 24 * 60 * 60 * 1000))
      expect(await backups.runScheduledCycle(), `${frequency} on the boundary`).toBe('ran')
    }
    const all = await listBackups(relay.app)
    // All four ran; the default keep policy keeps the last three, as the cloud dated them all today.
    expect(all.map((backup) => backup.status)).toEqual(['completed', 'completed', 'completed'])
    expect(relay.logs.filter((line) => line.includes('"trigger":"scheduled"'))).toHaveLength(4)
  })

  it('skips a scheduled backup that would store nothing new, until something changed', async () => {
    const clock = createTestClock(new Date())
    const relay = await signedInRelay(suite.cloud, { clock })
    const backups = relay.app.services.backups
    await saveSettings(relay.app, { enabled: true, frequency: 'daily' })
    expect(await backups.runScheduledCycle()).toBe('ran')
    const [first] = await listBackups(relay.app)
    const day = 24 * 60 * 60 * 1000
    const settings = await saveSettings(relay.app, { frequency: 'daily' })
    const last = new Date(defined(settings.lastBackup)).getTime()

    // Only the relay's own notes changed since (its notifications, the sign-in): nothing new to store.
    clock.set(new Date(last + day))
    expect(await backups.runScheduledCycle()).toBe('skipped')
    expect((await listBackups(relay.app)).map((backup) => backup.id)).toEqual([defined(first).id])
    expect(relay.logs.filter((line) => line.includes('"reason":"unchanged"'))).toHaveLength(1)
    expect(backups.operations.list().filter((operation) => operation.kind === 'backup')).toHaveLength(1)
    // The check counts as the day's backup: the next one is due a day after it.
    clock.set(new Date(last + day + 60_000))
    expect(await backups.runScheduledCycle()).toBe('skipped')

    await changeSettings(relay.app, 7)
    clock.set(new Date(last + 2 * day))
    expect(await backups.runScheduledCycle()).toBe('ran')
    expect(await listBackups(relay.app)).toHaveLength(2)
  })

  it('fails a backup over quota with a notification and no temp file', async () => {
    const relay = await signedInRelay(suite.cloud)
    const now = new Date()
    await suite.cloud.database.db
      .insertInto('backups')
      .values(
        Array.from({ length: 500 }, (_, i) => ({
          id: crypto.randomUUID(),
          user_id: relay.user.id,
          backend_id: 'elsewhere',
          filename: `old-${i}.zip`,
          s3_key: `backups/${relay.user.id}/elsewhere/old-${i}-${crypto.randomUUID()}.zip`,
          uncompressed_size: 10,
          compressed_size: 10,
          sha256: null,
          status: 'completed',
          created_at: now,
          expires_at: null,
        })),
      )
      .execute()
    const operation = await backUp(relay.app)
    expect(operation).toMatchObject({
      stage: 'failed',
      error:
        "The account would hold more than the cloud's limit of 500 backups, even after deleting every older backup " +
        'of this relay: other relays of the account hold 500. Delete backups of the other relays.',
    })
    expect(await cloudNotificationTitles(relay.app)).toEqual(['Backup failed'])
    expect(tempFiles(relay)).toEqual([])
  })

  it('restores a backup: the data comes back, a safety copy stays, the sign-ins are kept', async () => {
    const relay = await signedInRelay(suite.cloud)
    await addCollector(relay.app, 'boiler room')
    const backup = await backUp(relay.app)
    await addCollector(relay.app, 'made after the backup')
    expect(await collectorNames(relay.app)).toHaveLength(2)

    const restore = await restoreBackup(relay.app, defined(backup.backupId))
    expect(restore).toMatchObject({ kind: 'restore', stage: 'done', error: null, backupId: backup.backupId })
    expect(await collectorNames(relay.app)).toEqual(['boiler room'])
    expect(readdirSync(path.join(relay.dataDir, 'pre-restore'))).toHaveLength(1)
    const status = (await relay.app.inject({ url: '/api/unified-auth/status' })).json()
    expect(status).toMatchObject({ backendAuthenticated: true, cloud: { userId: relay.user.id } })
    expect(tempFiles(relay)).toEqual([])
    // The relay goes on working on the restored file.
    await addCollector(relay.app, 'after the restore')
    expect(await collectorNames(relay.app)).toHaveLength(2)
  })

  it('refuses to restore a tampered archive and leaves the database untouched', async () => {
    const relay = await signedInRelay(suite.cloud)
    await addCollector(relay.app, 'original')
    const backup = await backUp(relay.app)
    await addCollector(relay.app, 'kept')
    const record = await listedBackup(relay.app, defined(backup.backupId))
    tamperWithStoredObject(suite.cloud, record.s3Key)

    const restore = await restoreBackup(relay.app, defined(backup.backupId))
    expect(restore.stage).toBe('failed')
    expect(restore.error).toMatch(/checksum/)
    expect(await collectorNames(relay.app)).toEqual(['original', 'kept'])
    expect(existsSync(path.join(relay.dataDir, 'pre-restore'))).toBe(false)
    expect(tempFiles(relay)).toEqual([])
    expect(await cloudNotificationTitles(relay.app)).toContain('Restore failed')
  })

  it('answers bad input with clear 4xx errors and changes nothing', async () => {
    const relay = await signedInRelay(suite.cloud)
    // Before a first save the cloud reports its defaults, stamped with the time of the read.
    const settingsNow = async () => {
      const { updatedAt: _at, ...settings } = (await relay.app.inject({ url: '/api/cloud-backups/status' })).json()
        .settings
      return settings
    }
    const before = await settingsNow()
    const bad: Array<[string, string, string | undefined]> = [
      ['POST', '/api/cloud-backups/settings', '{"enabled": tru'],
      ['POST', '/api/cloud-backups/settings', '{"enabled": "yes"}'],
      ['POST', '/api/cloud-backups/settings', '{"retentionDays": 366}'],
      ['POST', '/api/cloud-backups/settings', '{"frequency": "hourly"}'],
      ['POST', '/api/cloud-backups/settings', '{}'],
      ['POST', '/api/cloud-backups/settings', '{"lastBackup": "2026-01-01T00:00:00Z"}'],
      ['GET', '/api/cloud-backups/list?limit=101', undefined],
      ['GET', '/api/cloud-backups/list?limit=abc', undefined],
      ['GET', '/api/cloud-backups/not-a-uuid/download', undefined],
      ['DELETE', '/api/cloud-backups/not-a-uuid', undefined],
      ['POST', '/api/cloud-backups/2b0d8d52-7e4e-4d6e-9b7f-3f1f0f3e9a11/restore', '{"includeKeys": "no"}'],
      ['POST', '/api/cloud-backups/2b0d8d52-7e4e-4d6e-9b7f-3f1f0f3e9a11/restore', '{"wipe": true}'],
    ]
    for (const [method, url, payload] of bad) {
      const res = await relay.app.inject({
        method: method as 'GET',
        url,
        headers: payload === undefined ? {} : json,
        payload,
      })
      expect(res.statusCode, `${method} ${url} ${payload}`).toBe(400)
      expect(res.json()).toMatchObject({ success: false, code: 'INVALID_REQUEST' })
    }
    const unknown = '2b0d8d52-7e4e-4d6e-9b7f-3f1f0f3e9a11'
    for (const [method, url] of [
      ['GET', `/api/cloud-backups/${unknown}/download`],
      ['DELETE', `/api/cloud-backups/${unknown}`],
      ['GET', '/api/cloud-backups/operations/nope'],
    ] as const) {
      const res = await relay.app.inject({ method, url })
      expect(res.statusCode, url).toBe(404)
      expect(res.json()).toMatchObject({ success: false, code: 'NOT_FOUND' })
    }
    expect((await restoreBackup(relay.app, unknown)).error).toMatch(/no such backup/i)
    expect(await settingsNow()).toEqual(before)
  })

  it('takes a consistent backup while another connection writes, and restores every row committed before it', async () => {
    const relay = await signedInRelay(suite.cloud)
    const writer = new SQLite(path.join(relay.dataDir, 'relay.db'))
    writer.pragma('busy_timeout = 5000')
    writer.exec('create table readings (id integer primary key, value real not null)')
    const insert = writer.prepare('insert into readings (value) values (?)')
    for (let i = 0; i < 5000; i++) {
      insert.run(Math.random())
    }
    const committedBefore = 5000
    let writes = 0
    const timer = setInterval(() => {
      for (let i = 0; i < 50; i++) {
        insert.run(Math.random())
        writes++
      }
    }, 1)
    const backup = await backUp(relay.app)
    clearInterval(timer)
    writer.close()
    expect(backup.stage).toBe('done')
    expect(writes).toBeGreaterThan(0)

    expect((await restoreBackup(relay.app, defined(backup.backupId))).stage).toBe('done')
    const check = new SQLite(path.join(relay.dataDir, 'relay.db'), { readonly: true })
    expect(check.pragma('integrity_check', { simple: true })).toBe('ok')
    const restored = (check.prepare('select count(*) as n from readings').get() as { n: number }).n
    check.close()
    expect(restored).toBeGreaterThanOrEqual(committedBefore)
    expect(restored).toBeLessThanOrEqual(committedBefore + writes)
  })
})

describe('relay cloud backups when the object store misbehaves', () => {
  const net = useCloudBehindFaultProxy()

  it('fails when the store refuses the upload: no false success, a notification, no temp file', async () => {
    const relay = await net.signedInRelay()
    net.proxy.inject((req) => (req.method === 'PUT' && req.url?.startsWith('/s3/') ? 'refuse' : undefined))
    const operation = await backUp(relay.app)
    net.proxy.inject(() => undefined)
    expect(operation).toMatchObject({
      stage: 'failed',
      error: 'The object store refused the upload (403 AccessDenied)',
    })
    expect((await listBackups(relay.app)).map((backup) => backup.status)).toEqual(['pending'])
    expect(await cloudNotificationTitles(relay.app)).toEqual(['Backup failed'])
    expect(tempFiles(relay)).toEqual([])
  })

  it('fails when the cloud cannot confirm the upload (409): the backup is marked failed, never reported done', async () => {
    const relay = await net.signedInRelay()
    net.proxy.inject((req) => (req.method === 'PUT' && req.url?.startsWith('/s3/') ? 'swallow' : undefined))
    const operation = await backUp(relay.app)
    net.proxy.inject(() => undefined)
    expect(operation.stage).toBe('failed')
    expect(operation.error).toMatch(/^Upload not accepted: no uploaded file/)
    expect((await listBackups(relay.app)).map((backup) => backup.status)).toEqual(['failed'])
    expect(await cloudNotificationTitles(relay.app)).toEqual(['Backup failed'])
    expect(tempFiles(relay)).toEqual([])
  })
})

async function listBackupsOrNone(app: RelayApp): Promise<BackupRecord[]> {
  const res = await app.inject({ url: '/api/cloud-backups/list' })
  return res.statusCode === 200 ? res.json().backups : []
}
