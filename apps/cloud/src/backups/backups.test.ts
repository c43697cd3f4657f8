import { createHash, randomBytes } from 'node:crypto'
import { backupQuota, licenseRequiredMessage, quotaReasons } from '@relay/contracts'
import { createTestClock } from '@relay/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Caller, newCaller, putUpload } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { databaseKinds } from '../../test/database.js'
import { cleanupBackups } from './cleanup.js'

const start = '2026-05-10T08:00:00.000Z'
const file = randomBytes(64 * 1024)
const sha256 = createHash('sha256').update(file).digest('hex')
const uploadBody = (backendId: string, extra: Record<string, unknown> = {}) => ({
  filename: 'relay-backup-20260510T080000Z.zip',
  backendId,
  uncompressedSize: file.length * 3,
  compressedSize: file.length,
  sha256,
  ...extra,
})

describe.each(databaseKinds)('cloud backups on %s', (kind) => {
  const clock = createTestClock(start)
  let cloud: TestCloud

  beforeAll(async () => {
    cloud = await startTestCloud(kind, { clock, env: { LOG_LEVEL: 'warn' } })
  })

  afterAll(async () => {
    await cloud?.close()
  })

  // biome-ignore lint/suspicious/noExplicitAny: replies are checked field by field below
  async function json(response: Response): Promise<{ status: number; body: any; headers: Headers }> {
    return { status: response.status, body: await response.json(), headers: response.headers }
  }

  /** Requests, uploads and confirms one backup; returns the grant and the confirmed record. */
  async function backUp(user: Caller, backendId: string, body: Uint8Array<ArrayBuffer> = file) {
    const grant = await json(
      await user.call('POST', '/cloud-backups/request-upload', {
        ...uploadBody(backendId),
        compressedSize: body.length,
        sha256: createHash('sha256').update(body).digest('hex'),
      }),
    )
    expect(grant.status).toBe(200)
    const put = await putUpload(grant.body, body)
    expect(put.status).toBe(200)
    const done = await json(
      await user.call('POST', '/cloud-backups/complete-upload', {
        backupId: grant.body.backupId,
        actualCompressedSize: body.length,
      }),
    )
    expect(done.status).toBe(200)
    return { grant: grant.body, backup: done.body.backup }
  }

  it('reports status without a license, with defaults and empty usage', async () => {
    const user = await newCaller(cloud, { licensed: false })
    const { status, body } = await json(await user.call('GET', '/cloud-backups/status'))
    expect(status).toBe(200)
    expect(body).toEqual({
      success: true,
      hasValidLicense: false,
      settings: {
        enabled: false,
        frequency: 'daily',
        retentionDays: 30,
        includeKeys: false,
        includeIdentity: true,
        includeFrameEngine: true,
        lastBackup: null,
        updatedAt: start,
      },
      usage: {
        backupCount: 0,
        completedCount: 0,
        pendingCount: 0,
        failedCount: 0,
        totalBytes: 0,
        maxBackupBytes: backupQuota.maxBackupBytes,
        maxTotalBytes: backupQuota.maxTotalBytes,
        maxBackups: backupQuota.maxBackups,
      },
      lastBackup: null,
    })
  })

  it('requires a license on every endpoint but status, and to enable backups', async () => {
    const user = await newCaller(cloud, { licensed: false })
    const id = '6f1c0a52-5b8e-4f8e-9d55-0c1f3e6a9b10'
    const calls = [
      user.call('POST', '/cloud-backups/settings', { enabled: true }),
      user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-a')),
      user.call('POST', '/cloud-backups/complete-upload', { backupId: id, actualCompressedSize: 1 }),
      user.call('GET', '/cloud-backups/list'),
      user.call('POST', `/cloud-backups/${id}/request-download`),
      user.call('DELETE', `/cloud-backups/${id}`),
    ]
    for (const response of await Promise.all(calls)) {
      expect(await json(response)).toMatchObject({
        status: 403,
        body: { success: false, code: 'LICENSE_REQUIRED', error: licenseRequiredMessage },
      })
    }
    // Turning backups off, or changing settings while off, never needs a license.
    const off = await json(await user.call('POST', '/cloud-backups/settings', { enabled: false, retentionDays: 7 }))
    expect(off).toMatchObject({ status: 200, body: { settings: { enabled: false, retentionDays: 7 } } })
  })

  it('refuses device tokens and missing tokens on every endpoint', async () => {
    const device = await newCaller(cloud, { type: 'device' })
    for (const [method, url] of [
      ['GET', '/cloud-backups/status'],
      ['POST', '/cloud-backups/settings'],
      ['POST', '/cloud-backups/request-upload'],
      ['POST', '/cloud-backups/complete-upload'],
      ['GET', '/cloud-backups/list'],
      ['POST', '/cloud-backups/6f1c0a52-5b8e-4f8e-9d55-0c1f3e6a9b10/request-download'],
      ['DELETE', '/cloud-backups/6f1c0a52-5b8e-4f8e-9d55-0c1f3e6a9b10'],
    ] as const) {
      const asDevice = await json(await device.call(method, url, method === 'POST' ? {} : undefined))
      expect(asDevice).toMatchObject({ status: 403, body: { code: 'DEVICE_TOKEN_FORBIDDEN' } })
      const anonymous = await fetch(new URL(url, cloud.url), { method })
      expect(anonymous.status).toBe(401)
    }
  })

  it('validates and saves settings', async () => {
    const user = await newCaller(cloud)
    const bad = [
      { frequency: 'hourly' },
      { retentionDays: 0 },
      { retentionDays: 366 },
      { retentionDays: 1.5 },
      { retentionDays: '30' },
      { enabled: 'yes' },
      { surprise: true },
      {},
    ]
    for (const body of bad) {
      expect(await json(await user.call('POST', '/cloud-backups/settings', body))).toMatchObject({
        status: 400,
        body: { success: false, code: 'INVALID_REQUEST' },
      })
    }
    expect((await user.call('POST', '/cloud-backups/settings', '{"enabled":')).status).toBe(400)

    clock.advance(1000)
    const saved = await json(
      await user.call('POST', '/cloud-backups/settings', {
        enabled: true,
        frequency: 'weekly',
        retentionDays: 365,
        includeKeys: true,
      }),
    )
    expect(saved.body).toEqual({
      success: true,
      settings: expect.objectContaining({
        enabled: true,
        frequency: 'weekly',
        retentionDays: 365,
        includeKeys: true,
        includeIdentity: true,
        updatedAt: clock.now().toISOString(),
      }),
    })
    const status = await json(await user.call('GET', '/cloud-backups/status'))
    expect(status.body.settings).toEqual(saved.body.settings)
  })

  it('runs request-upload, PUT, complete-upload, list, download and delete', async () => {
    const user = await newCaller(cloud)
    await user.call('POST', '/cloud-backups/settings', { retentionDays: 10 })
    const { grant, backup } = await backUp(user, 'backend-flow')

    const day = start.slice(0, 10)
    expect(grant.s3Key).toBe(
      `backups/${user.id}/backend-flow/${day}/${grant.backupId}_relay-backup-20260510T080000Z.zip`,
    )
    expect(grant.uploadHeaders).toMatchObject({ 'content-type': 'application/octet-stream' })
    expect(new Date(grant.expiresAt).getTime() - clock.now().getTime()).toBe(30 * 60 * 1000)
    expect(backup).toEqual({
      id: grant.backupId,
      backendId: 'backend-flow',
      filename: 'relay-backup-20260510T080000Z.zip',
      s3Key: grant.s3Key,
      uncompressedSize: file.length * 3,
      compressedSize: file.length,
      sha256,
      status: 'completed',
      createdAt: clock.now().toISOString(),
      expiresAt: new Date(clock.now().getTime() + 10 * 86_400_000).toISOString(),
    })

    const status = await json(await user.call('GET', '/cloud-backups/status'))
    expect(status.body.settings.lastBackup).toBe(clock.now().toISOString())
    expect(status.body.lastBackup).toEqual(backup)
    expect(status.body.usage).toMatchObject({ backupCount: 1, completedCount: 1, totalBytes: file.length })

    const list = await json(await user.call('GET', '/cloud-backups/list?backendId=backend-flow&limit=10'))
    expect(list.body).toEqual({ success: true, backups: [backup], total: 1 })

    const download = await json(await user.call('POST', `/cloud-backups/${grant.backupId}/request-download`))
    expect(download.body).toMatchObject({
      success: true,
      filename: backup.filename,
      compressedSize: file.length,
      sha256,
    })
    const fetched = await fetch(download.body.downloadUrl)
    expect(fetched.status).toBe(200)
    expect(Buffer.from(await fetched.arrayBuffer()).equals(file)).toBe(true)

    const removed = await json(await user.call('DELETE', `/cloud-backups/${grant.backupId}`))
    expect(removed).toMatchObject({ status: 200, body: { success: true } })
    await expect(cloud.app.services.backups.store.head(grant.s3Key)).resolves.toBeUndefined()
    expect((await fetch(download.body.downloadUrl)).status).toBe(404)
    expect((await json(await user.call('GET', '/cloud-backups/list'))).body.total).toBe(0)
  })

  it('requires the SHA-256 and pins the upload URL to it', async () => {
    const user = await newCaller(cloud)
    const { sha256: _, ...unpinned } = uploadBody('backend-pin')
    expect(await json(await user.call('POST', '/cloud-backups/request-upload', unpinned))).toMatchObject({
      status: 400,
      body: { success: false, code: 'INVALID_REQUEST', details: [{ path: 'body/sha256' }] },
    })
    const grant = await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-pin')))
    expect(grant.body.uploadHeaders['x-amz-checksum-sha256']).toBe(Buffer.from(sha256, 'hex').toString('base64'))
    const other = await putUpload(grant.body, randomBytes(file.length))
    expect(other.status).toBe(400)
    expect(await other.text()).toContain('<Code>BadDigest</Code>')
    await expect(cloud.app.services.backups.store.head(grant.body.s3Key)).resolves.toBeUndefined()
  })

  it('never lets the upload URL of a completed backup write again', async () => {
    const user = await newCaller(cloud)
    const { grant } = await backUp(user, 'backend-final')
    // Still within its 30 minutes, and for the first two the very bytes and checksum it was signed for.
    expect(new Date(grant.expiresAt).getTime()).toBeGreaterThan(clock.now().getTime())
    const replays = [
      await putUpload(grant, file),
      await putUpload(grant, file),
      await putUpload(grant, randomBytes(file.length)),
    ]
    for (const replay of replays) {
      expect(replay.status).toBe(403)
      expect(await replay.text()).toContain('<Code>AccessDenied</Code>')
    }

    const download = await json(await user.call('POST', `/cloud-backups/${grant.backupId}/request-download`))
    const fetched = await fetch(download.body.downloadUrl)
    expect(Buffer.from(await fetched.arrayBuffer()).equals(file)).toBe(true)
    await expect(cloud.app.services.backups.store.head(grant.s3Key)).resolves.toEqual({ size: file.length, sha256 })

    // Nor does a deleted backup's URL bring its file back as an orphan.
    expect((await user.call('DELETE', `/cloud-backups/${grant.backupId}`)).status).toBe(200)
    expect((await putUpload(grant, file)).status).toBe(403)
    await expect(cloud.app.services.backups.store.head(grant.s3Key)).resolves.toBeUndefined()
  })

  it('fails a backup whose upload is missing or does not match, once and for good', async () => {
    const user = await newCaller(cloud)
    const grant = await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-miss')))
    const confirm = () =>
      user.call('POST', '/cloud-backups/complete-upload', {
        backupId: grant.body.backupId,
        actualCompressedSize: file.length,
      })
    expect(await json(await confirm())).toMatchObject({ status: 409, body: { code: 'UPLOAD_MISMATCH' } })
    expect(await json(await confirm())).toMatchObject({ status: 409, body: { code: 'CONFLICT' } })
    const listed = await json(await user.call('GET', '/cloud-backups/list'))
    expect(listed.body.backups[0]).toMatchObject({ id: grant.body.backupId, status: 'failed' })

    const second = await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-miss')))
    expect((await putUpload(second.body, file)).status).toBe(200)
    const wrongSize = await user.call('POST', '/cloud-backups/complete-upload', {
      backupId: second.body.backupId,
      actualCompressedSize: file.length - 1,
    })
    expect(await json(wrongSize)).toMatchObject({ status: 409, body: { code: 'UPLOAD_MISMATCH' } })

    const pending = await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-miss')))
    const early = await json(await user.call('POST', `/cloud-backups/${pending.body.backupId}/request-download`))
    expect(early).toMatchObject({ status: 409, body: { code: 'CONFLICT' } })
  })

  it('checks the quotas in order, counting pending and completed but not failed backups', async () => {
    const user = await newCaller(cloud)
    const tooBig = await json(
      await user.call(
        'POST',
        '/cloud-backups/request-upload',
        uploadBody('backend-q', { compressedSize: backupQuota.maxBackupBytes + 1 }),
      ),
    )
    expect(tooBig).toMatchObject({
      status: 429,
      body: { code: 'QUOTA_BACKUP_SIZE', error: quotaReasons.QUOTA_BACKUP_SIZE },
    })

    // Exactly the limit fits: ten pending reservations of 50 MB.
    for (let i = 0; i < 10; i++) {
      const ok = await user.call(
        'POST',
        '/cloud-backups/request-upload',
        uploadBody('backend-q', { compressedSize: backupQuota.maxBackupBytes }),
      )
      expect(ok.status).toBe(200)
      clock.advance(60_000) // refill the backup rate limit
    }
    const full = await json(
      await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-q', { compressedSize: 1 })),
    )
    expect(full).toMatchObject({ status: 429, body: { code: 'QUOTA_STORAGE', error: quotaReasons.QUOTA_STORAGE } })
    const both = await json(
      await user.call(
        'POST',
        '/cloud-backups/request-upload',
        uploadBody('backend-q', { compressedSize: backupQuota.maxBackupBytes + 1 }),
      ),
    )
    expect(both.body.code).toBe('QUOTA_BACKUP_SIZE')

    // A failed backup frees its space.
    const { db } = cloud.database
    await db.updateTable('backups').set({ status: 'failed' }).where('user_id', '=', user.id).execute()
    clock.advance(60_000)
    const again = await user.call(
      'POST',
      '/cloud-backups/request-upload',
      uploadBody('backend-q', { compressedSize: 1 }),
    )
    expect(again.status).toBe(200)
  })

  it('refuses the 501st backup, and names storage first when both limits are hit', async () => {
    const user = await newCaller(cloud)
    const { db } = cloud.database
    const rows = Array.from({ length: backupQuota.maxBackups - 1 }, (_, i) => ({
      id: crypto.randomUUID(),
      user_id: user.id,
      backend_id: 'backend-count',
      filename: `b${i}.zip`,
      s3_key: `seed/${user.id}/${i}`,
      uncompressed_size: 1,
      // Together just under the storage quota: 1000 bytes left.
      compressed_size: i === 0 ? backupQuota.maxTotalBytes - 1000 - (backupQuota.maxBackups - 2) : 1,
      sha256: null,
      status: i % 2 ? ('completed' as const) : ('pending' as const),
      created_at: clock.now(),
      expires_at: null,
    }))
    await db.insertInto('backups').values(rows).execute()
    await db
      .insertInto('backend_owners')
      .values({ backend_id: 'backend-count', user_id: user.id, claimed_at: clock.now() })
      .execute()
    clock.advance(60_000)
    const last = await user.call(
      'POST',
      '/cloud-backups/request-upload',
      uploadBody('backend-count', { compressedSize: 1 }),
    )
    expect(last.status).toBe(200)
    const over = await json(
      await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-count', { compressedSize: 1 })),
    )
    expect(over).toMatchObject({ status: 429, body: { code: 'QUOTA_COUNT', error: quotaReasons.QUOTA_COUNT } })
    const storageToo = await json(
      await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-count', { compressedSize: 2000 })),
    )
    expect(storageToo.body.code).toBe('QUOTA_STORAGE')
  })

  it("refuses another user's backend, and answers 404 for foreign or unknown backups", async () => {
    const owner = await newCaller(cloud)
    const other = await newCaller(cloud)
    const { grant } = await backUp(owner, 'backend-owned')
    expect(
      await json(await other.call('POST', '/cloud-backups/request-upload', uploadBody('backend-owned'))),
    ).toMatchObject({
      status: 403,
      body: { code: 'BACKEND_OWNED_BY_OTHER' },
    })
    expect((await other.call('GET', '/cloud-backups/list?backendId=backend-owned')).status).toBe(403)
    for (const id of [grant.backupId, '00000000-0000-4000-8000-000000000000']) {
      for (const response of [
        await other.call('POST', '/cloud-backups/complete-upload', { backupId: id, actualCompressedSize: 1 }),
        await other.call('POST', `/cloud-backups/${id}/request-download`),
        await other.call('DELETE', `/cloud-backups/${id}`),
      ]) {
        expect(await json(response)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } })
      }
    }
    expect((await owner.call('POST', `/cloud-backups/${grant.backupId}/request-download`)).status).toBe(200)
  })

  it('answers bad input with a clear 400 and stores nothing', async () => {
    const user = await newCaller(cloud)
    const bad = [
      '{"filename":',
      uploadBody('backend-bad', { compressedSize: -1 }),
      uploadBody('backend-bad', { compressedSize: 0 }),
      uploadBody('backend-bad', { compressedSize: 1e20 }),
      uploadBody('backend-bad', { compressedSize: '100' }),
      uploadBody('backend-bad', { uncompressedSize: -5 }),
      uploadBody('backend-bad', { filename: '../../etc/passwd' }),
      uploadBody('backend-bad', { filename: 'a/b.zip' }),
      uploadBody('backend-bad', { filename: 'a\\b.zip' }),
      uploadBody('backend-bad', { filename: '' }),
      uploadBody('backend-bad', { filename: 'x'.repeat(256) }),
      uploadBody('../other-user', {}),
      uploadBody('a/b', {}),
      uploadBody('x'.repeat(256), {}),
      uploadBody('backend-bad', { sha256: 'not-hex' }),
      uploadBody('backend-bad', { sha256: undefined }),
      uploadBody('backend-bad', { sha256: sha256.slice(1) }),
      uploadBody('backend-bad', { extra: 1 }),
      { backendId: 'backend-bad' },
    ]
    for (const body of bad) {
      clock.advance(60_000)
      const response = await json(await user.call('POST', '/cloud-backups/request-upload', body))
      expect(response).toMatchObject({ status: 400, body: { success: false, code: 'INVALID_REQUEST' } })
    }
    for (const [method, url, body] of [
      ['POST', '/cloud-backups/complete-upload', { backupId: 'nope', actualCompressedSize: 1 }],
      [
        'POST',
        '/cloud-backups/complete-upload',
        { backupId: '00000000-0000-4000-8000-000000000000', actualCompressedSize: -1 },
      ],
      ['GET', '/cloud-backups/list?limit=0', undefined],
      ['GET', '/cloud-backups/list?limit=101', undefined],
      ['GET', '/cloud-backups/list?backendId=..%2Fx', undefined],
      ['POST', '/cloud-backups/not-a-uuid/request-download', undefined],
      ['DELETE', '/cloud-backups/..%2F..%2Fetc', undefined],
    ] as const) {
      clock.advance(60_000)
      const response = await user.call(method, url, body)
      expect(response.status, `${method} ${url}`).toBe(400)
    }
    expect((await json(await user.call('GET', '/cloud-backups/status'))).body.usage.backupCount).toBe(0)
  })

  it('limits dashboard calls to 200 per 10 s per user, with the headers', async () => {
    const user = await newCaller(cloud, { licensed: false })
    const responses = await Promise.all(Array.from({ length: 200 }, () => user.call('GET', '/cloud-backups/status')))
    expect(responses.map((r) => r.status)).toEqual(Array(200).fill(200))
    expect(responses.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((a, b) => a - b)[0]).toBe(0)
    const refused = await user.call('GET', '/cloud-backups/status')
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(await refused.json()).toMatchObject({ success: false, code: 'RATE_LIMITED' })

    clock.advance(50) // one token: 200 per 10 000 ms
    expect((await user.call('GET', '/cloud-backups/status')).status).toBe(200)
    expect((await user.call('GET', '/cloud-backups/status')).status).toBe(429)
    // Another user has a bucket of their own.
    expect((await (await newCaller(cloud)).call('GET', '/cloud-backups/status')).status).toBe(200)
  })

  it('limits uploads more strictly: 10 per minute', async () => {
    const user = await newCaller(cloud)
    clock.advance(60_000)
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) {
      statuses.push(
        (
          await user.call('POST', '/cloud-backups/complete-upload', {
            backupId: crypto.randomUUID(),
            actualCompressedSize: 1,
          })
        ).status,
      )
    }
    expect(statuses).toEqual([...Array(10).fill(404), 429])
    clock.advance(6000)
    expect(
      (
        await user.call('POST', '/cloud-backups/complete-upload', {
          backupId: crypto.randomUUID(),
          actualCompressedSize: 1,
        })
      ).status,
    ).toBe(404)
  })

  it('cleans up expired and stale pending backups with their files', async () => {
    const user = await newCaller(cloud)
    await user.call('POST', '/cloud-backups/settings', { retentionDays: 1 })
    const expiring = await backUp(user, 'backend-clean')
    clock.advance(60_000)
    const stale = await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-clean')))
    expect((await putUpload(stale.body, file)).status).toBe(200)

    clock.advance(23 * 3_600_000)
    const fresh = await json(await user.call('POST', '/cloud-backups/request-upload', uploadBody('backend-clean')))
    clock.advance(2 * 3_600_000)

    const logs: object[] = []
    const { store } = cloud.app.services.backups
    const result = await cleanupBackups({ db: cloud.database.db, store, clock, log: { info: (obj) => logs.push(obj) } })
    expect(result).toMatchObject({ ran: true })
    expect(result.expired).toBeGreaterThanOrEqual(1)
    expect(result.stalePending).toBeGreaterThanOrEqual(1)
    expect(logs).toContainEqual({ expired: result.expired, stalePending: result.stalePending, total: result.total })

    const left = await json(await user.call('GET', '/cloud-backups/list'))
    expect(left.status, JSON.stringify(left.body)).toBe(200)
    expect(left.body.backups.map((b: { id: string }) => b.id)).toEqual([fresh.body.backupId])
    await expect(store.head(expiring.grant.s3Key)).resolves.toBeUndefined()
    await expect(store.head(stale.body.s3Key)).resolves.toBeUndefined()
  })

  it('runs the cleanup on one instance at a time', async () => {
    const { db } = cloud.database
    const { store } = cloud.app.services.backups
    const log = { info: () => {} }
    if (kind === 'postgres') {
      // Another instance holds the lock for as long as its transaction runs.
      const { sql } = await import('kysely')
      let lockTaken = () => {}
      let release = () => {}
      const locked = new Promise<void>((resolve) => {
        lockTaken = resolve
      })
      const released = new Promise<void>((resolve) => {
        release = resolve
      })
      const held = db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext('backup_cleanup'))`.execute(trx)
        lockTaken()
        await released
      })
      // The cleanup starts once the other transaction holds the lock (or fails with it).
      await Promise.race([locked, held])
      await expect(cleanupBackups({ db, store, clock, log })).resolves.toMatchObject({ ran: false })
      release()
      await held
    }
    await expect(cleanupBackups({ db, store, clock, log })).resolves.toMatchObject({ ran: true })
  })
})
