import { createHash } from 'node:crypto'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { crc32 } from 'node:zlib'
import type { BackupOperation, UploadGrant, VerificationOverview } from '@relay/contracts'
import { createTestClock, defined, tempDir } from '@relay/testkit'
import SQLite from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import {
  backendIdOf,
  backUpUntilIdle,
  cloudNotificationMessages,
  cloudNotificationTitles,
  type LinkedRelay,
  listedBackup,
  signedInRelay,
  storedObjectFile,
  tamperWithStoredObject,
  tempFiles,
  useCloud,
} from '../../../test/backups.js'
import { startCloud, startLinkedRelay } from '../../../test/cloud.js'
import { migrations } from '../../db/migrations/index.js'
import { uploadFile } from '../transfer.js'

const json = { 'content-type': 'application/json' }
const day = 24 * 60 * 60 * 1000
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

/** POST …/verify, then the operation once it has finished. */
async function verify(relay: LinkedRelay, backupId: string): Promise<BackupOperation> {
  const res = await relay.app.inject({ method: 'POST', url: `/api/cloud-backups/${backupId}/verify` })
  expect(res.statusCode, res.body).toBe(202)
  await relay.app.services.backups.idle()
  return relay.app.services.backups.getOperation(res.json().operationId)
}

async function overview(relay: LinkedRelay): Promise<VerificationOverview> {
  const res = await relay.app.inject({ url: '/api/cloud-backups/verification' })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

async function setFrequency(relay: LinkedRelay, frequency: string): Promise<VerificationOverview> {
  const res = await relay.app.inject({
    method: 'PUT',
    url: '/api/cloud-backups/verification',
    headers: json,
    payload: JSON.stringify({ frequency }),
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

function verificationFailures(relay: LinkedRelay): Promise<string[]> {
  return cloudNotificationMessages(relay.app, { titled: 'Backup verification failed' })
}

function verificationRows(relay: LinkedRelay): { backup_id: string; outcome: string }[] {
  const sqlite = new SQLite(path.join(relay.dataDir, 'relay.db'), { readonly: true })
  try {
    return sqlite.prepare('select backup_id, outcome from backup_verifications order by backup_id').all() as {
      backup_id: string
      outcome: string
    }[]
  } finally {
    sqlite.close()
  }
}

function skipLines(relay: LinkedRelay, reason: string): string[] {
  return relay.logs.filter((line) => line.includes('scheduled verification skipped') && line.includes(`"${reason}"`))
}

/**
 * A ZIP of `entries` stored without compression, as any zip tool can write one: the bytes of a backup
 * archive that was damaged before it was uploaded.
 */
function storedZip(entries: { name: string; data: Buffer }[]): Buffer {
  const uint32 = (value: number) => {
    const bytes = Buffer.alloc(4)
    bytes.writeUInt32LE(value)
    return bytes
  }
  const parts: Buffer[] = []
  const central: Buffer[] = []
  let offset = 0
  for (const { name, data } of entries) {
    const nameBytes = Buffer.from(name)
    // What the local header and the central record share: version 2.0, UTF-8 name, stored, made
    // 2026-11-20 13:05, CRC-32, both sizes, the name's length, no extra field.
    const shared = Buffer.alloc(26)
    shared.writeUInt16LE(20, 0)
    shared.writeUInt16LE(0x0800, 2)
    shared.writeUInt16LE((13 << 11) | (5 << 5), 6)
    shared.writeUInt16LE(((2026 - 1980) << 9) | (11 << 5) | 20, 8)
    shared.writeUInt32LE(crc32(data), 10)
    shared.writeUInt32LE(data.length, 14)
    shared.writeUInt32LE(data.length, 18)
    shared.writeUInt16LE(nameBytes.length, 22)
    // The central record's own fields: no comment, disk 0, no attributes, then where the entry starts.
    const tail = Buffer.alloc(14)
    tail.writeUInt32LE(offset, 10)
    parts.push(uint32(0x04034b50), shared, nameBytes, data)
    central.push(uint32(0x02014b50), Buffer.from([20, 0]), shared, tail, nameBytes)
    offset += 4 + shared.length + nameBytes.length + data.length
  }
  const directory = Buffer.concat(central)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...parts, directory, end])
}

/** A backup archive of `database` whose manifest lists it truly, or is replaced by `manifestText`. */
function backupArchive(relay: LinkedRelay, database: Buffer, manifestText?: string): Buffer {
  const manifest = {
    formatVersion: 1,
    appVersion: '0.1.0',
    backendId: backendIdOf(relay),
    createdAt: '2026-11-20T13:05:00.000Z',
    schemaVersion: Object.keys(migrations).at(-1),
    entries: [{ name: 'relay.db', size: database.length, sha256: sha256(database) }],
  }
  return storedZip([
    { name: 'relay.db', data: database },
    { name: 'manifest.json', data: Buffer.from(manifestText ?? JSON.stringify(manifest)) },
  ])
}

/** A SQLite database that opens, but whose index no longer matches its table: integrity_check fails. */
function inconsistentDatabase(): Buffer {
  const folder = tempDir('relay-verify-db-')
  try {
    const file = path.join(folder.path, 'relay.db')
    const sqlite = new SQLite(file)
    sqlite.exec(`create table readings (a integer, b integer); create index readings_a on readings (a);
      with recursive n(i) as (select 1 union all select i + 1 from n where i < 200)
      insert into readings select i, 200 - i from n;`)
    sqlite.unsafeMode(true)
    sqlite.pragma('writable_schema = on')
    sqlite
      .prepare("update sqlite_schema set sql = 'CREATE INDEX readings_a ON readings (b)' where name = 'readings_a'")
      .run()
    sqlite.close()
    return readFileSync(file)
  } finally {
    folder.remove()
  }
}

/** Uploads `archive` as a completed backup of the relay, through request-upload, PUT and complete-upload. */
async function uploadArchive(relay: LinkedRelay, archive: Buffer): Promise<string> {
  const { cloud } = relay.app.services
  const folder = tempDir('relay-verify-upload-')
  try {
    const file = path.join(folder.path, 'backup.zip')
    writeFileSync(file, archive)
    const grant = await cloud.request<UploadGrant>('POST', '/cloud-backups/request-upload', {
      filename: 'relay-backup-20261120T130500Z.zip',
      backendId: backendIdOf(relay),
      uncompressedSize: archive.length,
      compressedSize: archive.length,
      sha256: sha256(archive),
    })
    await uploadFile(grant.uploadUrl, grant.uploadHeaders, file, archive.length, () => {})
    await cloud.request('POST', '/cloud-backups/complete-upload', {
      backupId: grant.backupId,
      actualCompressedSize: archive.length,
    })
    return grant.backupId
  } finally {
    folder.remove()
  }
}

describe('backup verification against the real cloud and its object store', () => {
  const suite = useCloud()

  it('verifies a backup on demand: the list and the overview show when, nothing is left behind, nothing notified', async () => {
    const relay = await signedInRelay(suite.cloud)
    const backup = await backUpUntilIdle(relay.app, { expectDone: true })
    const operation = await verify(relay, defined(backup.backupId))
    expect(operation).toMatchObject({
      kind: 'verify',
      trigger: 'manual',
      stage: 'done',
      error: null,
      backupId: backup.backupId,
      filename: backup.filename,
    })
    const { verification } = await listedBackup(relay.app, defined(backup.backupId))
    expect(verification).toEqual({
      outcome: 'ok',
      verifiedAt: expect.any(String),
      checkedAt: expect.any(String),
      error: null,
    })
    expect(verification?.verifiedAt).toBe(verification?.checkedAt)
    const { lastRun, settings, nextDueAt } = await overview(relay)
    expect(settings).toEqual({ frequency: 'weekly' })
    expect(lastRun).toEqual({ backupId: backup.backupId, ...verification })
    expect(Date.parse(defined(nextDueAt)) - Date.parse(defined(verification?.checkedAt))).toBe(7 * day)
    expect(tempFiles(relay)).toEqual([])
    expect(await cloudNotificationTitles(relay.app)).toEqual(['Backup complete'])
    expect(relay.logs.some((line) => line.includes('backup verified: it can be restored'))).toBe(true)
  })

  it('fails a backup whose stored file was changed, keeps when it last passed, and says to make a new one', async () => {
    const relay = await signedInRelay(suite.cloud)
    const backup = await backUpUntilIdle(relay.app, { expectDone: true })
    const backupId = defined(backup.backupId)
    expect((await verify(relay, backupId)).stage).toBe('done')
    const passed = defined((await listedBackup(relay.app, backupId)).verification)

    tamperWithStoredObject(suite.cloud, (await listedBackup(relay.app, backupId)).s3Key)
    const operation = await verify(relay, backupId)
    expect(operation.stage).toBe('failed')
    expect(operation.error).toBe(
      'The downloaded backup does not match the size and checksum the cloud recorded. Make a new backup now.',
    )
    expect((await listedBackup(relay.app, backupId)).verification).toEqual({
      outcome: 'failed',
      verifiedAt: passed.verifiedAt,
      checkedAt: expect.any(String),
      error: 'The downloaded backup does not match the size and checksum the cloud recorded',
    })
    const [message, ...more] = await verificationFailures(relay)
    expect(more).toEqual([])
    expect(message).toMatch(
      /^The backup of \d{4}-\d\d-\d\d \d\d:\d\d UTC could not be verified: the downloaded backup does not match the size and checksum the cloud recorded\. Make a new backup now\.$/,
    )
    expect(tempFiles(relay)).toEqual([])
  })

  it("fails a backup whose file is gone from the cloud's storage", async () => {
    const relay = await signedInRelay(suite.cloud)
    const backupId = defined((await backUpUntilIdle(relay.app, { expectDone: true })).backupId)
    const stored = storedObjectFile(suite.cloud, (await listedBackup(relay.app, backupId)).s3Key)
    rmSync(stored)
    rmSync(`${stored}.json`)
    const operation = await verify(relay, backupId)
    expect(operation.error).toBe("The backup's file is missing from the cloud's storage. Make a new backup now.")
    expect((await listedBackup(relay.app, backupId)).verification).toMatchObject({
      outcome: 'failed',
      verifiedAt: null,
      error: "The backup's file is missing from the cloud's storage",
    })
    expect(await verificationFailures(relay)).toEqual([
      expect.stringMatching(/could not be verified: the backup's file is missing from the cloud's storage\. Make/),
    ])
    expect(tempFiles(relay)).toEqual([])
  })

  it('fails an archive whose manifest is damaged', async () => {
    const relay = await signedInRelay(suite.cloud)
    const database = readFileSync(path.join(relay.dataDir, 'relay.db'))
    const backupId = await uploadArchive(relay, backupArchive(relay, database, '{"formatVersion": 1, "entries": ['))
    const operation = await verify(relay, backupId)
    expect(operation).toMatchObject({ stage: 'failed', filename: 'relay-backup-20261120T130500Z.zip' })
    expect((await listedBackup(relay.app, backupId)).verification).toMatchObject({
      outcome: 'failed',
      error: "The backup archive's manifest.json is not valid JSON",
    })
    expect(await verificationFailures(relay)).toEqual([
      "The backup of 2026-11-20 13:05 UTC could not be verified: the backup archive's manifest.json is not valid JSON. Make a new backup now.",
    ])
    expect(tempFiles(relay)).toEqual([])
  })

  it('fails an archive whose database does not pass integrity_check', async () => {
    const relay = await signedInRelay(suite.cloud)
    const backupId = await uploadArchive(relay, backupArchive(relay, inconsistentDatabase()))
    const operation = await verify(relay, backupId)
    expect(operation.stage).toBe('failed')
    const { verification } = await listedBackup(relay.app, backupId)
    expect(verification).toMatchObject({ outcome: 'failed', verifiedAt: null })
    expect(verification?.error).toMatch(/^The database in the backup archive is damaged: .*readings_a/)
    expect(await verificationFailures(relay)).toEqual([
      expect.stringMatching(
        /^The backup of 2026-11-20 13:05 UTC could not be verified: the database in the backup archive is damaged: .*Make a new backup now\.$/,
      ),
    ])
    expect(tempFiles(relay)).toEqual([])
  })

  it('fails, and says to check the connection, when the cloud cannot be reached', async () => {
    const own = await startCloud()
    let backupId: string
    let relay: LinkedRelay
    try {
      relay = await signedInRelay(own)
      backupId = defined((await backUpUntilIdle(relay.app, { expectDone: true })).backupId)
    } finally {
      await own.close()
    }
    const operation = await verify(relay, backupId)
    expect(operation).toMatchObject({ stage: 'failed', backupId })
    expect(operation.error).toMatch(
      /^The cloud is unreachable \(ECONNREFUSED\)\. Check the relay's internet connection/,
    )
    const { lastRun } = await overview(relay)
    expect(lastRun).toMatchObject({
      backupId,
      outcome: 'failed',
      verifiedAt: null,
      error: 'The cloud is unreachable (ECONNREFUSED)',
    })
    expect(await verificationFailures(relay)).toEqual([
      `Backup ${backupId} could not be verified: the cloud is unreachable (ECONNREFUSED). Check the relay's internet connection, then choose Verify now on the Cloud backups page.`,
    ])
    expect(tempFiles(relay)).toEqual([])
  })

  it('verifies on the scheduler cycle when due: not before, not while busy, never when off', async () => {
    const clock = createTestClock(new Date())
    const relay = await signedInRelay(suite.cloud, { clock })
    const { backups } = relay.app.services
    const verifications = () => backups.operations.list().filter((operation) => operation.kind === 'verify')

    // Nothing to verify yet: skipped, and said once.
    expect(await backups.verification.runScheduled()).toBe('skipped')
    expect(await backups.verification.runScheduled()).toBe('skipped')
    expect(skipLines(relay, 'no-backup')).toHaveLength(1)

    await backUpUntilIdle(relay.app, { expectDone: true })
    const newest = await backUpUntilIdle(relay.app, { expectDone: true })
    await setFrequency(relay, 'daily')
    // The cycle backs up only when automatic backups are on (they are not); it verifies at its end.
    expect(await backups.runScheduledCycle()).toBe('skipped')
    expect(verifications()).toEqual([
      expect.objectContaining({ trigger: 'scheduled', stage: 'done', backupId: newest.backupId }),
    ])
    const first = defined((await overview(relay)).lastRun)
    expect(first).toMatchObject({ backupId: newest.backupId, outcome: 'ok', checkedAt: clock.now().toISOString() })
    expect((await overview(relay)).nextDueAt).toBe(new Date(clock.now().getTime() + day).toISOString())

    clock.advance(day - 1)
    expect(await backups.verification.runScheduled()).toBe('skipped')
    expect(await backups.verification.runScheduled()).toBe('skipped')
    expect(skipLines(relay, 'not-due')).toHaveLength(1)
    expect(verifications()).toHaveLength(1)

    clock.advance(1)
    await backups.startBackup('manual')
    expect(await backups.verification.runScheduled()).toBe('skipped')
    expect(skipLines(relay, 'busy')).toHaveLength(1)
    await backups.idle()
    expect(verifications()).toHaveLength(1)

    expect(await backups.verification.runScheduled()).toBe('ran')
    expect(verifications()).toHaveLength(2)
    // The backup made while it was busy is now the newest, and the one verified.
    expect(verifications()[0]?.backupId).toBe(defined((await overview(relay)).lastRun).backupId)
    expect(verifications()[0]?.backupId).not.toBe(newest.backupId)

    const off = await setFrequency(relay, 'off')
    expect(off).toMatchObject({ settings: { frequency: 'off' }, nextDueAt: null })
    clock.advance(400 * day)
    expect(await backups.verification.runScheduled()).toBe('skipped')
    expect(skipLines(relay, 'off')).toHaveLength(1)
    expect(verifications()).toHaveLength(2)
    expect(await verificationFailures(relay)).toEqual([])
    expect(tempFiles(relay)).toEqual([])
  })

  it('forgets the result of a backup deleted through the relay, and of one the cloud no longer lists', async () => {
    const relay = await signedInRelay(suite.cloud)
    const kept = defined((await backUpUntilIdle(relay.app, { expectDone: true })).backupId)
    const deleted = defined((await backUpUntilIdle(relay.app, { expectDone: true })).backupId)
    await verify(relay, kept)
    await verify(relay, deleted)
    expect(
      verificationRows(relay)
        .map((row) => row.backup_id)
        .sort(),
    ).toEqual([kept, deleted].sort())
    const removed = await relay.app.inject({ method: 'DELETE', url: `/api/cloud-backups/${deleted}` })
    expect(removed.statusCode, removed.body).toBe(200)
    expect(verificationRows(relay)).toEqual([{ backup_id: kept, outcome: 'ok' }])

    // Gone at the cloud without the relay's knowing (its retention, another relay): pruned when a
    // scheduled verification reads the account's whole list.
    await suite.cloud.database.db.deleteFrom('backups').where('id', '=', kept).execute()
    await setFrequency(relay, 'daily')
    const sqlite = new SQLite(path.join(relay.dataDir, 'relay.db'))
    sqlite.prepare("update backup_verifications set checked_at = '2020-01-01T00:00:00.000Z'").run()
    sqlite.close()
    expect(await relay.app.services.backups.verification.runScheduled()).toBe('skipped')
    expect(verificationRows(relay)).toEqual([])
  })

  it('answers bad input with clear 4xx errors and starts nothing', async () => {
    const relay = await signedInRelay(suite.cloud)
    const bad: Array<[string, string, string | undefined]> = [
      ['POST', '/api/cloud-backups/not-a-uuid/verify', undefined],
      ['PUT', '/api/cloud-backups/verification', '{"frequency": "week'],
      ['PUT', '/api/cloud-backups/verification', '{"frequency": "hourly"}'],
      ['PUT', '/api/cloud-backups/verification', '{"frequency": 7}'],
      ['PUT', '/api/cloud-backups/verification', '{}'],
      ['PUT', '/api/cloud-backups/verification', '{"frequency": "daily", "at": "03:00"}'],
      ['PUT', '/api/cloud-backups/verification', JSON.stringify({ frequency: 'daily'.repeat(10_000) })],
      ['PUT', '/api/cloud-backups/verification', '["daily"]'],
    ]
    for (const [method, url, payload] of bad) {
      const res = await relay.app.inject({
        method: method as 'PUT',
        url,
        headers: payload === undefined ? {} : json,
        payload,
      })
      expect(res.statusCode, `${method} ${url} ${payload}`).toBe(400)
      expect(res.json()).toMatchObject({ success: false, code: 'INVALID_REQUEST', error: expect.any(String) })
    }
    const unknown = await relay.app.inject({
      method: 'POST',
      url: '/api/cloud-backups/2b0d8d52-7e4e-4d6e-9b7f-3f1f0f3e9a11/verify',
    })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toMatchObject({ success: false, code: 'NOT_FOUND' })

    // A pending backup has no file to verify yet.
    const pending = await relay.app.services.cloud.request<UploadGrant>('POST', '/cloud-backups/request-upload', {
      filename: 'relay-backup-20261120T130500Z.zip',
      backendId: backendIdOf(relay),
      uncompressedSize: 10,
      compressedSize: 10,
      sha256: 'a'.repeat(64),
    })
    const unfinished = await relay.app.inject({ method: 'POST', url: `/api/cloud-backups/${pending.backupId}/verify` })
    expect(unfinished.statusCode).toBe(409)
    expect(unfinished.json()).toMatchObject({ code: 'CONFLICT', error: expect.stringMatching(/pending/) })

    // One operation at a time: a verification waits for the backup in progress, and says so.
    const backup = await relay.app.services.backups.startBackup('manual')
    const busy = await relay.app.inject({
      method: 'POST',
      url: '/api/cloud-backups/2b0d8d52-7e4e-4d6e-9b7f-3f1f0f3e9a11/verify',
    })
    expect(busy.statusCode).toBe(409)
    expect(busy.json()).toMatchObject({ code: 'CONFLICT', error: expect.stringMatching(/already running/) })
    await relay.app.services.backups.idle()
    expect(relay.app.services.backups.getOperation(backup.id).stage).toBe('done')

    expect(relay.app.services.backups.operations.list().filter((operation) => operation.kind === 'verify')).toEqual([])
    expect((await overview(relay)).settings).toEqual({ frequency: 'weekly' })
    expect(verificationRows(relay)).toEqual([])
    expect(await verificationFailures(relay)).toEqual([])
  })

  it('refuses to verify for a relay that is not signed in to the cloud', async () => {
    const relay = await startLinkedRelay(suite.cloud)
    const res = await relay.app.inject({
      method: 'POST',
      url: '/api/cloud-backups/2b0d8d52-7e4e-4d6e-9b7f-3f1f0f3e9a11/verify',
    })
    expect(res.statusCode).toBe(401)
    expect(res.json()).toMatchObject({ code: 'CLOUD_NOT_AUTHENTICATED' })
    // The settings are the relay's own: readable and changeable without the cloud.
    expect(await setFrequency(relay, 'monthly')).toMatchObject({ settings: { frequency: 'monthly' }, lastRun: null })
  })
})
