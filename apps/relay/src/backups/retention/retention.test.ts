import { randomUUID } from 'node:crypto'
import { defaultKeepPolicy, keepNothingMessage, MB } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import type { TestCloud } from '../../../../cloud/test/cloud-server.js'
import {
  backUpUntilIdle,
  cloudNotificationMessages,
  type LinkedRelay,
  listBackups,
  signedInRelay,
  useCloud,
} from '../../../test/backups.js'
import { startLinkedRelay } from '../../../test/cloud.js'
import { useCloudBehindFaultProxy } from '../../../test/cloud-behind-proxy.js'
import type { RelayApp } from '../../app.js'
import { deletionReasons } from './quota-fit.js'

const json = { 'content-type': 'application/json' }
const day = 24 * 60 * 60 * 1000

/** Records in the cloud as if uploaded earlier: `sizes` in MB, the first the oldest, one a day up to yesterday. */
async function seedBackups(cloud: TestCloud, userId: string, backendId: string, sizes: number[]): Promise<string[]> {
  const now = Date.now()
  const rows = sizes.map((size, i) => ({
    id: randomUUID(),
    user_id: userId,
    backend_id: backendId,
    filename: `relay-backup-seeded-${i}.zip`,
    s3_key: `backups/${userId}/${backendId}/seeded-${randomUUID()}.zip`,
    uncompressed_size: Math.round(size * MB),
    compressed_size: Math.round(size * MB),
    sha256: null,
    status: 'completed' as const,
    created_at: new Date(now - (sizes.length - i) * day),
    expires_at: null,
  }))
  await cloud.database.db.insertInto('backups').values(rows).execute()
  // Written past the cloud's service: its status must not answer from before.
  cloud.app.services.backups.forgetRecent()
  return rows.map((row) => row.id)
}

/** Every backup of the account, newest first, as the cloud holds them. */
async function cloudRecords(cloud: TestCloud, userId: string) {
  return cloud.database.db
    .selectFrom('backups')
    .select(['id', 'backend_id', 'status'])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .execute()
}

async function putPolicy(app: RelayApp, payload: string) {
  return app.inject({ method: 'PUT', url: '/api/cloud-backups/retention', headers: json, payload })
}

const deletionLines = (relay: LinkedRelay) =>
  relay.logs.filter((line) => line.includes('deleted a cloud backup')).map((line) => JSON.parse(line))

describe('backup retention against the real cloud', () => {
  const suite = useCloud()

  it('makes room in a full quota by deleting the oldest backup outside the policy, then applies the policy', async () => {
    const relay = await signedInRelay(suite.cloud)
    const saved = await putPolicy(
      relay.app,
      JSON.stringify({ keepLast: 2, keepDaily: 3, keepWeekly: 0, keepMonthly: 0 }),
    )
    expect(saved.statusCode, saved.body).toBe(200)
    // Ten days of this relay at 45 MB and another relay's 50 MB: one byte short of 500 MB.
    const own = await seedBackups(suite.cloud, relay.user.id, relay.backendId, Array(10).fill(45))
    const [otherRelay] = await seedBackups(suite.cloud, relay.user.id, 'another-relay', [50 - 1 / MB])

    const operation = await backUpUntilIdle(relay.app)
    expect(operation.stage, operation.error ?? '').toBe('done')

    // Kept: the new backup and the two days before it (keepDaily 3; keepLast 2 within them), and the other relay's.
    const left = await cloudRecords(suite.cloud, relay.user.id)
    expect(left.map((record) => record.id).sort()).toEqual([operation.backupId, own[9], own[8], otherRelay].sort())
    expect(left.every((record) => record.status === 'completed')).toBe(true)
    const deletions = deletionLines(relay)
    // The oldest went first, to make room (without it the upload is refused), the others after the upload.
    expect(deletions.map((line) => line.backupId)).toEqual(own.slice(0, 8))
    expect(deletions[0]).toMatchObject({ filename: 'relay-backup-seeded-0.zip', reason: deletionReasons.outsidePolicy })

    const retention = (await relay.app.inject({ url: '/api/cloud-backups/retention' })).json()
    expect(retention).toMatchObject({
      success: true,
      policy: { keepLast: 2, keepDaily: 3, keepWeekly: 0, keepMonthly: 0 },
      reason: null,
      projection: { policyKeeps: 3, exceedsQuota: false, otherBytes: 50 * MB - 1 },
    })
    expect(retention.projection.sentence).toMatch(
      /^At \d+ kB a backup, \d+ backups of this relay fit beside the next upload; your policy keeps up to 3\.$/,
    )
  })

  it('deletes backups the policy keeps when nothing else makes room, but never the newest', async () => {
    const relay = await signedInRelay(suite.cloud)
    // The default policy keeps all three (the last three); other relays fill the rest.
    const own = await seedBackups(suite.cloud, relay.user.id, relay.backendId, [45, 45, 45])
    await seedBackups(suite.cloud, relay.user.id, 'another-relay', [365 - 1 / MB])

    const operation = await backUpUntilIdle(relay.app)
    expect(operation.stage, operation.error ?? '').toBe('done')
    const ownLeft = (await cloudRecords(suite.cloud, relay.user.id)).filter((r) => r.backend_id === relay.backendId)
    expect(ownLeft.map((record) => record.id)).toEqual([operation.backupId, own[2], own[1]])
    expect(deletionLines(relay)).toEqual([
      expect.objectContaining({ backupId: own[0], reason: deletionReasons.keptByPolicy }),
    ])
    expect(relay.logs.some((line) => line.includes('the keep policy keeps more backups than the quota holds'))).toBe(
      true,
    )
  })

  it('fails a backup that cannot fit, saying what to change, and deletes nothing', async () => {
    const relay = await signedInRelay(suite.cloud)
    const [newest] = await seedBackups(suite.cloud, relay.user.id, relay.backendId, [20])
    await seedBackups(suite.cloud, relay.user.id, 'another-relay', [480])
    const before = await cloudRecords(suite.cloud, relay.user.id)

    const operation = await backUpUntilIdle(relay.app)
    expect(operation.stage).toBe('failed')
    expect(operation.error).toMatch(/^This backup \(\d+ kB\) does not fit in the account's 500\.0 MB of cloud storage/)
    expect(operation.error).toContain("this relay's newest backup, which is always kept, uses 20.0 MB")
    expect(operation.error).toContain('other relays of the account use 480.0 MB')
    expect(operation.error).toContain('Delete backups of the other relays')
    expect(await cloudNotificationMessages(relay.app)).toEqual([`The backup failed: ${operation.error}`])
    expect(await cloudRecords(suite.cloud, relay.user.id)).toEqual(before)
    expect(before.map((record) => record.id)).toContain(newest)
    expect(deletionLines(relay)).toEqual([])
  })

  it('pages through more backups than the cloud lists at once, pruning the oldest', async () => {
    const relay = await signedInRelay(suite.cloud)
    const saved = await putPolicy(relay.app, '{"keepLast": 1, "keepDaily": 0, "keepWeekly": 0, "keepMonthly": 0}')
    expect(saved.statusCode, saved.body).toBe(200)
    await seedBackups(suite.cloud, relay.user.id, relay.backendId, Array(130).fill(0.001))

    const operation = await backUpUntilIdle(relay.app)
    expect(operation.stage, operation.error ?? '').toBe('done')
    expect((await cloudRecords(suite.cloud, relay.user.id)).map((record) => record.id)).toEqual([operation.backupId])
    expect(deletionLines(relay)).toHaveLength(130)
  })

  it('keeps the policy in the relay, refuses bad input with 400 and changes nothing', async () => {
    const relay = await signedInRelay(suite.cloud)
    const first = (await relay.app.inject({ url: '/api/cloud-backups/retention' })).json()
    expect(first).toMatchObject({ success: true, policy: defaultKeepPolicy, reason: null })
    expect(first.projection).toMatchObject({ backupBytes: null, fit: null, policyKeeps: 14 })

    const bad = [
      '{"keepLast": 3',
      '{"keepLast": "3"}',
      '{"keepLast": 2.5}',
      '{"keepDaily": -1}',
      '{"keepWeekly": 101}',
      '{"keepMonthly": 1e9}',
      '{"keepYearly": 1}',
      '{"keepLast": 1, "surprise": true}',
      '{}',
      '[]',
      'null',
      '{"keepLast": 0, "keepDaily": 0, "keepWeekly": 0, "keepMonthly": 0}',
    ]
    for (const payload of bad) {
      const res = await putPolicy(relay.app, payload)
      expect(res.statusCode, payload).toBe(400)
      expect(res.json(), payload).toMatchObject({ success: false, code: 'INVALID_REQUEST' })
    }
    const zeros = await putPolicy(relay.app, '{"keepLast": 0, "keepDaily": 0, "keepWeekly": 0, "keepMonthly": 0}')
    expect(zeros.json().error).toBe(keepNothingMessage)
    const text = await relay.app.inject({
      method: 'PUT',
      url: '/api/cloud-backups/retention',
      headers: { 'content-type': 'text/plain' },
      payload: 'keepLast=1',
    })
    expect(text.statusCode).toBeGreaterThanOrEqual(400)
    expect(text.statusCode).toBeLessThan(500)
    expect((await relay.app.inject({ url: '/api/cloud-backups/retention' })).json().policy).toEqual(defaultKeepPolicy)

    const changed = await putPolicy(relay.app, '{"keepMonthly": 12, "keepWeekly": 0}')
    expect(changed.statusCode, changed.body).toBe(200)
    expect(changed.json().policy).toEqual({ ...defaultKeepPolicy, keepMonthly: 12, keepWeekly: 0 })
    // Counts that keep something are fine when the others are zero.
    const one = await putPolicy(relay.app, '{"keepLast": 0, "keepDaily": 0, "keepMonthly": 1}')
    expect(one.json().policy).toEqual({ keepLast: 0, keepDaily: 0, keepWeekly: 0, keepMonthly: 1 })
    // Then zeroing the last count that keeps anything is refused.
    expect((await putPolicy(relay.app, '{"keepMonthly": 0}')).statusCode).toBe(400)
    expect((await relay.app.inject({ url: '/api/cloud-backups/retention' })).json().policy.keepMonthly).toBe(1)
  })

  it('answers with the policy and a reason, but no projection, when the relay is not signed in', async () => {
    const relay = await startLinkedRelay(suite.cloud)
    const res = await relay.app.inject({ url: '/api/cloud-backups/retention' })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({
      success: true,
      policy: defaultKeepPolicy,
      projection: null,
      reason: "Connect the relay to Relay Cloud to see how many backups fit in the account's quota.",
    })
  })
})

describe('backup retention when the cloud does not answer', () => {
  const net = useCloudBehindFaultProxy()

  it('still answers with the policy, and says why there is no projection', async () => {
    const relay = await net.signedInRelay()
    net.proxy.inject((req) => (req.url?.startsWith('/cloud-backups/') ? 'refuse' : undefined))
    const res = await relay.app.inject({ url: '/api/cloud-backups/retention' })
    const saved = await putPolicy(relay.app, '{"keepLast": 5}')
    net.proxy.inject(() => undefined)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ success: true, policy: defaultKeepPolicy, projection: null })
    expect(res.json().reason).toMatch(
      /^Relay Cloud cannot tell how much of the quota is used right now \(.+\); try again later\.$/,
    )
    expect(saved.statusCode, saved.body).toBe(200)
    expect(saved.json()).toMatchObject({ policy: { keepLast: 5 }, projection: null })
  })

  it('logs a failed pruning after a backup, which still succeeds, and prunes after the next one', async () => {
    const relay = await net.signedInRelay()
    expect(
      (await putPolicy(relay.app, '{"keepLast": 1, "keepDaily": 0, "keepWeekly": 0, "keepMonthly": 0}')).statusCode,
    ).toBe(200)
    const first = await backUpUntilIdle(relay.app)
    net.proxy.inject((req) =>
      req.method === 'DELETE' && req.url?.startsWith('/cloud-backups/') ? 'refuse' : undefined,
    )
    const second = await backUpUntilIdle(relay.app)
    net.proxy.inject(() => undefined)
    expect([first.stage, second.stage, second.error]).toEqual(['done', 'done', null])
    expect(relay.logs.some((line) => line.includes('backups outside the keep policy not deleted'))).toBe(true)
    const listed = async () => (await listBackups(relay.app)).map((backup) => backup.id)
    expect(await listed()).toEqual([second.backupId, first.backupId])

    const third = await backUpUntilIdle(relay.app)
    expect(third.stage).toBe('done')
    expect(await listed()).toEqual([third.backupId])
  })
})
