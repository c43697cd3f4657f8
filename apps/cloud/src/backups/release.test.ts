import { createHash, randomBytes } from 'node:crypto'
import { backupQuota, cleanupWorker, DAY, HOUR, MINUTE, pendingLapsesAfter } from '@relay/contracts'
import { createTestClock } from '@relay/testkit'
import { sql } from 'kysely'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { type Caller, newCaller, putUpload } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/database.js'
import { backupJobs, releaseLapsedBackups } from './cleanup.js'

const start = '2026-07-01T10:00:00.000Z'
const generous = { dashboard: { capacity: 10_000, refillEvery: 1000 }, backup: { capacity: 10_000, refillEvery: 1000 } }
const file = randomBytes(32 * 1024)
const sha256 = createHash('sha256').update(file).digest('hex')
const uploadBody = (backendId: string, compressedSize = file.length) => ({
  filename: 'relay-backup.zip',
  backendId,
  uncompressedSize: compressedSize * 2,
  compressedSize,
  sha256,
})

// biome-ignore lint/suspicious/noExplicitAny: replies are checked field by field below
async function json(response: Response): Promise<{ status: number; body: any }> {
  return { status: response.status, body: await response.json() }
}

describe.each(databaseKinds)('quota released on time on %s', (kind) => {
  const clock = createTestClock(start)
  let cloud: TestCloud
  const quiet = { info() {} }

  beforeAll(async () => {
    cloud = await startTestCloud(kind, {
      clock,
      env: { LOG_LEVEL: 'warn' },
      overrides: { rateLimitPolicies: generous },
    })
  })

  afterAll(async () => {
    await cloud?.close()
  })

  const store = () => cloud.app.services.backups.store
  const status = async (user: Caller) => (await json(await user.call('GET', '/cloud-backups/status'))).body
  const release = () => releaseLapsedBackups({ db: cloud.database.db, store: store(), clock, log: quiet })
  const statusOf = async (id: string) =>
    (await cloud.database.db.selectFrom('backups').select('status').where('id', '=', id).executeTakeFirst())?.status

  it('deletes the file of an upload that does not verify at once, and counts nothing for it', async () => {
    const user = await newCaller(cloud)
    const grant = await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-fail')))
    expect((await putUpload(grant.body, file)).status).toBe(200)
    await expect(store().head(grant.body.s3Key)).resolves.toEqual({ size: file.length, sha256 })

    const mismatch = await json(
      await user.call('POST', '/cloud-backups/complete-upload', {
        backupId: grant.body.backupId,
        actualCompressedSize: file.length + 1,
      }),
    )
    expect(mismatch).toMatchObject({ status: 409, body: { code: 'UPLOAD_MISMATCH' } })
    await expect(store().head(grant.body.s3Key)).resolves.toBeUndefined()
    expect((await status(user)).usage).toMatchObject({
      backupCount: 1,
      failedCount: 1,
      pendingCount: 0,
      totalBytes: 0,
    })
  })

  it('deletes the file of a failed backup again on the next release run', async () => {
    const user = await newCaller(cloud)
    const grant = await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-retry')))
    expect((await putUpload(grant.body, file)).status).toBe(200)
    // Failed while its file could not be deleted (the store was down, or the process stopped in between).
    await cloud.database.db
      .updateTable('backups')
      .set({ status: 'failed' })
      .where('id', '=', grant.body.backupId)
      .execute()
    await expect(store().head(grant.body.s3Key)).resolves.toBeDefined()

    await expect(release()).resolves.toMatchObject({ ran: true })
    await expect(store().head(grant.body.s3Key)).resolves.toBeUndefined()
  })

  it('stops counting a pending backup once its upload window and grace pass, and the release job fails it', async () => {
    const user = await newCaller(cloud)
    // The whole storage quota in pending reservations, none of them ever uploaded.
    const grants = []
    for (let i = 0; i < backupQuota.maxTotalBytes / backupQuota.maxBackupBytes; i++) {
      const grant = await json(
        await user.call('POST', '/cloud-backups/request-upload', {
          ...uploadBody('backend-lapse', backupQuota.maxBackupBytes),
        }),
      )
      expect(grant.status).toBe(200)
      grants.push(grant.body)
    }
    const full = await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-lapse')))
    expect(full).toMatchObject({ status: 429, body: { code: 'QUOTA_STORAGE' } })

    // At the end of the window and its grace: everything still counts, and the job releases nothing.
    clock.advance(pendingLapsesAfter)
    expect(
      (await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-lapse')))).status,
    ).toBe(429)
    await release()
    expect(await statusOf(grants[0].backupId)).toBe('pending')

    clock.advance(1)
    // Counted no more, before any job has run.
    expect((await status(user)).usage).toMatchObject({ pendingCount: 0, failedCount: 10, totalBytes: 0 })
    const fresh = await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-lapse')))
    expect(fresh.status).toBe(200)
    expect((await putUpload(fresh.body, file)).status).toBe(200)

    // A lapsed backup can no longer be confirmed.
    const late = await json(
      await user.call('POST', '/cloud-backups/complete-upload', {
        backupId: grants[1].backupId,
        actualCompressedSize: backupQuota.maxBackupBytes,
      }),
    )
    expect(late).toMatchObject({ status: 409, body: { code: 'CONFLICT' } })
    expect(await statusOf(grants[1].backupId)).toBe('failed')

    const result = await release()
    expect(result.ran).toBe(true)
    expect(result.released).toBeGreaterThanOrEqual(grants.length - 1)
    for (const grant of grants) {
      expect(await statusOf(grant.backupId)).toBe('failed')
    }
    // The newer upload is untouched and completes.
    const done = await json(
      await user.call('POST', '/cloud-backups/complete-upload', {
        backupId: fresh.body.backupId,
        actualCompressedSize: file.length,
      }),
    )
    expect(done).toMatchObject({ status: 200, body: { backup: { status: 'completed' } } })
    expect((await status(user)).usage).toMatchObject({ completedCount: 1, totalBytes: file.length })
  })

  it('releases the file a lapsed pending backup received', async () => {
    const user = await newCaller(cloud)
    const grant = await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-orphan')))
    expect((await putUpload(grant.body, file)).status).toBe(200)
    clock.advance(pendingLapsesAfter + MINUTE)
    await expect(release()).resolves.toMatchObject({ ran: true, released: 1 })
    expect(await statusOf(grant.body.backupId)).toBe('failed')
    await expect(store().head(grant.body.s3Key)).resolves.toBeUndefined()
  })

  it('deletes a pending backup of the caller with its file and frees its quota; 404 for anyone else', async () => {
    const owner = await newCaller(cloud)
    const other = await newCaller(cloud)
    const withFile = await json(await owner.call('POST', '/cloud-backups/request-upload', uploadBody('backend-del')))
    expect((await putUpload(withFile.body, file)).status).toBe(200)
    const withoutFile = await json(await owner.call('POST', '/cloud-backups/request-upload', uploadBody('backend-del')))
    expect((await status(owner)).usage).toMatchObject({ pendingCount: 2, totalBytes: 2 * file.length })

    for (const grant of [withFile.body, withoutFile.body]) {
      expect(await json(await other.call('DELETE', `/cloud-backups/${grant.backupId}`))).toMatchObject({
        status: 404,
        body: { code: 'NOT_FOUND' },
      })
    }
    expect(await statusOf(withFile.body.backupId)).toBe('pending')
    await expect(store().head(withFile.body.s3Key)).resolves.toBeDefined()

    for (const grant of [withFile.body, withoutFile.body]) {
      expect(await json(await owner.call('DELETE', `/cloud-backups/${grant.backupId}`))).toEqual({
        status: 200,
        body: { success: true },
      })
      expect(await statusOf(grant.backupId)).toBeUndefined()
    }
    await expect(store().head(withFile.body.s3Key)).resolves.toBeUndefined()
    expect((await status(owner)).usage).toMatchObject({ backupCount: 0, totalBytes: 0 })
    // Its upload URL writes nothing any more.
    expect((await putUpload(withFile.body, file)).status).toBe(403)
    await expect(store().head(withFile.body.s3Key)).resolves.toBeUndefined()
  })
})

describe.each(databaseKinds)('backup jobs across restarts on %s', (kind) => {
  const clock = createTestClock(start)
  let database: TestDatabase
  let userId: string
  let instance: TestCloud | undefined

  beforeAll(async () => {
    database = await createTestDatabase(kind)
    const first = await startTestCloud(kind, { clock, database })
    userId = await first.addUser('jobs@example.com', 'correct horse battery')
    await first.close()
  })

  afterEach(async () => {
    await instance?.close()
    instance = undefined
  })

  afterAll(async () => {
    await database?.dispose()
  })

  type Scheduled = { job: string; nextRunAt: string }

  /** Starts an instance and waits until it has made its start-up decision for both jobs. */
  async function startInstance() {
    const cloud = await startTestCloud(kind, { clock, database })
    instance = cloud
    const scheduled = () =>
      cloud.logs
        .flatMap((line) => {
          try {
            return [JSON.parse(line)]
          } catch {
            return []
          }
        })
        .filter((entry) => entry.msg === 'backup job scheduled') as Scheduled[]
    const decided = () => scheduled().map((entry) => entry.job)
    await vi.waitFor(() => expect(decided().sort()).toEqual(Object.values(backupJobs).sort()), { timeout: 10_000 })
    const nextRun = (job: string) => scheduled().find((entry) => entry.job === job)?.nextRunAt
    return { cloud, nextRun }
  }

  async function setLastRuns(cleanupAt: Date, releaseAt: Date) {
    await database.db.deleteFrom('cleanup_runs').execute()
    await database.db
      .insertInto('cleanup_runs')
      .values([
        { job: backupJobs.cleanup, last_run_at: cleanupAt },
        { job: backupJobs.release, last_run_at: releaseAt },
      ])
      .execute()
  }

  async function lastRuns() {
    const rows = await database.db.selectFrom('cleanup_runs').selectAll().execute()
    return Object.fromEntries(rows.map((row) => [row.job, row.last_run_at.toISOString()]))
  }

  /** An expired completed backup and a lapsed pending one: the cleanup removes the first, the release fails the second. */
  async function seedDueWork() {
    const now = clock.now().getTime()
    const row = (name: string, extra: { status: 'pending' | 'completed'; created_at: Date; expires_at: Date }) => ({
      id: crypto.randomUUID(),
      user_id: userId,
      backend_id: 'backend-jobs',
      filename: `${name}.zip`,
      s3_key: `seed/${crypto.randomUUID()}`,
      uncompressed_size: 1,
      compressed_size: 1,
      sha256: null,
      ...extra,
    })
    const expired = row('expired', {
      status: 'completed',
      created_at: new Date(now - 3 * DAY),
      expires_at: new Date(now - HOUR),
    })
    const lapsed = row('lapsed', {
      status: 'pending',
      created_at: new Date(now - pendingLapsesAfter - MINUTE),
      expires_at: new Date(now + DAY),
    })
    await database.db.insertInto('backups').values([expired, lapsed]).execute()
    return { expired: expired.id, lapsed: lapsed.id }
  }

  const statusOf = async (id: string) =>
    (await database.db.selectFrom('backups').select('status').where('id', '=', id).executeTakeFirst())?.status

  it('runs both jobs at start when they never ran, and records the runs', async () => {
    await database.db.deleteFrom('cleanup_runs').execute()
    const { nextRun } = await startInstance()
    const now = clock.now().getTime()
    expect(await lastRuns()).toEqual({
      [backupJobs.cleanup]: new Date(now).toISOString(),
      [backupJobs.release]: new Date(now).toISOString(),
    })
    expect(nextRun(backupJobs.cleanup)).toBe(new Date(now + cleanupWorker.interval).toISOString())
    expect(nextRun(backupJobs.release)).toBe(new Date(now + cleanupWorker.releaseInterval).toISOString())
  })

  it('runs overdue jobs at start', async () => {
    clock.advance(DAY)
    const now = clock.now().getTime()
    await setLastRuns(new Date(now - cleanupWorker.interval - MINUTE), new Date(now - cleanupWorker.releaseInterval))
    const seeded = await seedDueWork()

    const { nextRun } = await startInstance()
    expect(await statusOf(seeded.expired)).toBeUndefined()
    expect(await statusOf(seeded.lapsed)).toBe('failed')
    expect(await lastRuns()).toEqual({
      [backupJobs.cleanup]: new Date(now).toISOString(),
      [backupJobs.release]: new Date(now).toISOString(),
    })
    expect(nextRun(backupJobs.cleanup)).toBe(new Date(now + cleanupWorker.interval).toISOString())
  })

  it('does not run at start what ran recently, and schedules it an interval after that run', async () => {
    clock.advance(DAY)
    const now = clock.now().getTime()
    const cleanupAt = new Date(now - cleanupWorker.interval + HOUR)
    const releaseAt = new Date(now - 20 * MINUTE)
    await setLastRuns(cleanupAt, releaseAt)
    const seeded = await seedDueWork()

    const { nextRun } = await startInstance()
    expect(await statusOf(seeded.expired)).toBe('completed')
    expect(await statusOf(seeded.lapsed)).toBe('pending')
    expect(await lastRuns()).toEqual({
      [backupJobs.cleanup]: cleanupAt.toISOString(),
      [backupJobs.release]: releaseAt.toISOString(),
    })
    expect(nextRun(backupJobs.cleanup)).toBe(new Date(now + HOUR).toISOString())
    expect(nextRun(backupJobs.release)).toBe(new Date(now + 40 * MINUTE).toISOString())
    await database.db.deleteFrom('backups').execute()
  })

  it.runIf(kind === 'postgres')('leaves a job to the instance running it and tries again later', async () => {
    clock.advance(DAY)
    const now = clock.now().getTime()
    const cleanupAt = new Date(now - cleanupWorker.interval - HOUR)
    const releaseAt = new Date(now - cleanupWorker.releaseInterval - HOUR)
    await setLastRuns(cleanupAt, releaseAt)
    // Another instance is in the middle of both jobs.
    let release = () => {}
    let holding = () => {}
    const locked = new Promise<void>((resolve) => {
      holding = resolve
    })
    const held = database.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${backupJobs.cleanup}))`.execute(trx)
      await sql`select pg_advisory_xact_lock(hashtext(${backupJobs.release}))`.execute(trx)
      holding()
      await new Promise<void>((resolve) => {
        release = resolve
      })
    })
    await locked

    try {
      const { nextRun } = await startInstance()
      expect(await lastRuns()).toEqual({
        [backupJobs.cleanup]: cleanupAt.toISOString(),
        [backupJobs.release]: releaseAt.toISOString(),
      })
      expect(nextRun(backupJobs.cleanup)).toBe(new Date(now + cleanupWorker.retryAfter).toISOString())
      expect(nextRun(backupJobs.release)).toBe(new Date(now + cleanupWorker.retryAfter).toISOString())
    } finally {
      release()
      await held
    }
  })
})
