import { createHash, randomBytes } from 'node:crypto'
import { type BackupStatusReply, backupQuota, type DownloadGrant, type UploadGrant } from '@relay/contracts'
import { createTestClock, defined } from '@relay/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newCaller, putUpload } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/database.js'
import { testRedisUrl } from '../../test/redis.js'
import { openDatabase } from '../db/database.js'

const generous = { dashboard: { capacity: 10_000, refillEvery: 1000 }, backup: { capacity: 10_000, refillEvery: 1000 } }
const credentials = { S3_ACCESS_KEY_ID: 'scale-test-key', S3_SECRET_ACCESS_KEY: 'scale-test-secret-0123456789' }

/**
 * Two cloud instances on one PostgreSQL database (each with its own connection pool), one object
 * store (the embedded one, in the data folder they share) and, where said, one Redis.
 */
describe.runIf(databaseKinds.includes('postgres'))('two cloud instances on one PostgreSQL', () => {
  const clock = createTestClock('2026-06-01T09:00:00.000Z')
  let database: TestDatabase
  let first: TestCloud
  let second: TestCloud

  async function pair(env: Record<string, string> = {}, overrides = { rateLimitPolicies: generous }) {
    const a = await startTestCloud('postgres', { clock, database, env: { ...credentials, ...env }, overrides })
    const otherPool = await openDatabase({ databaseUrl: defined(database.url), dataDir: database.dataDir })
    const b = await startTestCloud('postgres', {
      clock,
      database: { ...otherPool, dataDir: database.dataDir, url: database.url, dispose: () => otherPool.close() },
      // One public address for both, as behind a load balancer: tokens from one are valid on the other.
      env: { ...credentials, ...env, CLOUD_PUBLIC_URL: a.url },
      overrides,
    })
    return [a, b] as const
  }

  beforeAll(async () => {
    database = await createTestDatabase('postgres')
    ;[first, second] = await pair()
  })

  afterAll(async () => {
    await second?.close()
    await second?.database.dispose()
    await first?.close()
    await database?.dispose()
  })

  /** A reservation; `sha256` matters only to a test that uploads the body. */
  const request = (
    cloud: TestCloud,
    token: string,
    compressedSize: number,
    backendId = 'backend-scale',
    sha256 = 'ab'.repeat(32),
  ) =>
    fetch(`${cloud.url}/cloud-backups/request-upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        filename: 'b.zip',
        backendId,
        uncompressedSize: 1,
        compressedSize,
        sha256,
      }),
    })

  it('never lets 60 parallel requests exceed the storage quota', async () => {
    const user = await newCaller(first)
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => request(i % 2 ? second : first, user.token, backupQuota.maxBackupBytes)),
    )
    const codes = await Promise.all(
      responses.map(async (r) => (r.status === 200 ? 'ok' : ((await r.json()) as { code: string }).code)),
    )
    expect(codes.filter((code) => code === 'ok')).toHaveLength(10)
    expect(
      codes.filter((code) => code === 'QUOTA_STORAGE'),
      codes.join(),
    ).toHaveLength(50)
    const { usage } = (await (await user.call('GET', '/cloud-backups/status')).json()) as BackupStatusReply
    expect(usage).toMatchObject({ pendingCount: 10, totalBytes: backupQuota.maxTotalBytes })
  })

  it('never lets 60 parallel requests exceed the count quota', async () => {
    const user = await newCaller(first)
    const rows = Array.from({ length: backupQuota.maxBackups - 10 }, (_, i) => ({
      id: crypto.randomUUID(),
      user_id: user.id,
      backend_id: 'backend-scale',
      filename: `b${i}.zip`,
      s3_key: `seed/${user.id}/${i}`,
      uncompressed_size: 1,
      compressed_size: 1,
      sha256: null,
      status: 'completed' as const,
      created_at: clock.now(),
      expires_at: null,
    }))
    await database.db.insertInto('backups').values(rows).execute()
    await database.db
      .insertInto('backend_owners')
      .values({ backend_id: 'backend-scale', user_id: user.id, claimed_at: clock.now() })
      .onConflict((oc) => oc.column('backend_id').doUpdateSet({ user_id: user.id }))
      .execute()
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => request(i % 2 ? second : first, user.token, 1)),
    )
    const codes = await Promise.all(
      responses.map(async (r) => (r.status === 200 ? 'ok' : ((await r.json()) as { code: string }).code)),
    )
    expect(codes.filter((code) => code === 'ok')).toHaveLength(10)
    expect(codes.filter((code) => code === 'QUOTA_COUNT')).toHaveLength(50)
  })

  it('uploads through one instance and confirms and downloads through the other', async () => {
    const user = await newCaller(first)
    const body = randomBytes(256 * 1024)
    const sha256 = createHash('sha256').update(body).digest('hex')
    const grant = (await (
      await request(second, user.token, body.length, 'backend-cross', sha256)
    ).json()) as UploadGrant
    expect((await putUpload(grant, body)).status).toBe(200)
    const done = await fetch(`${first.url}/cloud-backups/complete-upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ backupId: grant.backupId, actualCompressedSize: body.length }),
    })
    expect(done.status).toBe(200)
    const download = (await (
      await fetch(`${second.url}/cloud-backups/${grant.backupId}/request-download`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}` },
      })
    ).json()) as DownloadGrant
    expect(Buffer.from(await (await fetch(download.downloadUrl)).arrayBuffer()).equals(body)).toBe(true)
  })

  it('shares one rate-limit budget through Redis', async () => {
    const [a, b] = await pair({ REDIS_URL: testRedisUrl }, { rateLimitPolicies: undefined as never })
    try {
      const user = await newCaller(a)
      const responses = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          fetch(`${(i % 2 ? b : a).url}/cloud-backups/complete-upload`, {
            method: 'POST',
            headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ backupId: crypto.randomUUID(), actualCompressedSize: 1 }),
          }),
        ),
      )
      const statuses = responses.map((r) => r.status)
      expect(
        statuses.filter((s) => s === 404),
        statuses.join(),
      ).toHaveLength(10)
      expect(statuses.filter((s) => s === 429)).toHaveLength(6)
    } finally {
      await b.close()
      await b.database.dispose()
      await a.close()
    }
  })
})
