import { randomUUID } from 'node:crypto'
import { type BackupList, backupLimits } from '@relay/contracts'
import { createTestClock } from '@relay/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Caller, newCaller } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { databaseKinds } from '../../test/database.js'

describe.each(databaseKinds)('backup list pages on %s', (kind) => {
  const clock = createTestClock('2026-05-10T08:00:00.000Z')
  let cloud: TestCloud

  beforeAll(async () => {
    cloud = await startTestCloud(kind, { clock, env: { LOG_LEVEL: 'warn' } })
  })

  afterAll(async () => {
    await cloud?.close()
  })

  /** `count` completed records of one backend, an hour apart, and two sharing the newest moment. */
  async function seed(user: Caller, backendId: string, count: number): Promise<string[]> {
    const newest = clock.now().getTime()
    const rows = Array.from({ length: count }, (_, i) => ({
      id: randomUUID(),
      user_id: user.id,
      backend_id: backendId,
      filename: `relay-backup-${i}.zip`,
      s3_key: `backups/${user.id}/${backendId}/${i}.zip`,
      uncompressed_size: 10,
      compressed_size: 10,
      sha256: null,
      status: 'completed' as const,
      created_at: new Date(newest - Math.max(0, i - 1) * 3_600_000),
      expires_at: null,
    }))
    await cloud.database.db.insertInto('backups').values(rows).execute()
    return rows.map((row) => row.id)
  }

  async function page(user: Caller, query: string): Promise<BackupList> {
    const response = await user.call('GET', `/cloud-backups/list?${query}`)
    expect(response.status, query).toBe(200)
    return (await response.json()) as BackupList
  }

  it('pages through more backups than one list holds, newest first, each once', async () => {
    const user = await newCaller(cloud)
    await seed(user, 'backend-paged', 250)
    await seed(user, 'backend-other', 3)
    const seen: string[] = []
    for (let offset = 0; ; offset += backupLimits.listMax) {
      const { backups, total } = await page(
        user,
        `backendId=backend-paged&limit=${backupLimits.listMax}&offset=${offset}`,
      )
      expect(total).toBe(250)
      if (backups.length === 0) {
        break
      }
      seen.push(...backups.map((backup) => backup.id))
    }
    expect(seen).toHaveLength(250)
    expect(new Set(seen).size).toBe(250)
    const all = (await page(user, 'backendId=backend-paged&limit=100&offset=0')).backups
    expect(all.map((backup) => backup.createdAt)).toEqual([...all.map((backup) => backup.createdAt)].sort().reverse())
  })

  it('lists the newest page without an offset, as before', async () => {
    const user = await newCaller(cloud)
    await seed(user, 'backend-first', 5)
    const withOffset = await page(user, 'limit=3&offset=0')
    const without = await page(user, 'limit=3')
    expect(without).toEqual(withOffset)
    expect((await page(user, 'limit=3&offset=3')).backups).toHaveLength(2)
    expect(await page(user, 'limit=3&offset=5')).toEqual({ success: true, backups: [], total: 5 })
  })

  it('refuses a bad offset with 400', async () => {
    const user = await newCaller(cloud)
    for (const offset of ['-1', '1.5', 'abc', String(backupLimits.listOffsetMax + 1), '1e30', '']) {
      const response = await user.call('GET', `/cloud-backups/list?offset=${offset}`)
      expect(response.status, `offset=${offset}`).toBe(400)
      expect(await response.json()).toMatchObject({ success: false, code: 'INVALID_REQUEST' })
    }
  })
})
