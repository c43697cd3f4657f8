import { DAY, MINUTE, type NotificationKind, notificationKinds, SECOND } from '@relay/contracts'
import { createTestClock, type TestClock } from '@relay/testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, silentLog } from '../../test/database.js'
import { createNotificationService, type NotificationService } from './service.js'

let database: Awaited<ReturnType<typeof createTestDatabase>>
let clock: TestClock
let service: NotificationService

beforeEach(async () => {
  database = await createTestDatabase()
  clock = createTestClock()
  service = createNotificationService({ db: database.db, clock, log: silentLog })
})

afterEach(async () => {
  await database.dispose()
})

const pendingIds = async (since?: number) => (await service.pending(since)).notifications.map((n) => n.id)
const rowCount = async () =>
  Number(
    (
      await database.db
        .selectFrom('notifications')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

describe('pre-built kinds', () => {
  const kinds = Object.entries(notificationKinds) as [NotificationKind, (typeof notificationKinds)[NotificationKind]][]

  it.each(kinds)('%s has the spec expiry, persistence, type and category', async (kind, rule) => {
    const created = await service.notify(kind, { message: 'something happened' })
    expect(created).toMatchObject({ type: rule.type, category: rule.category, message: 'something happened' })
    expect(created.title).toEqual(expect.any(String))
    if (rule.expiresIn === null) {
      expect(created).toMatchObject({ persistent: true, expiresAt: null })
      clock.advance(3650 * DAY)
      expect(await pendingIds()).toEqual([created.id])
    } else {
      expect(created.persistent).toBe(false)
      expect(Date.parse(created.expiresAt ?? '') - clock.now().getTime()).toBe(rule.expiresIn)
      clock.advance(rule.expiresIn - 1)
      expect(await pendingIds()).toEqual([created.id])
      clock.advance(1)
      expect(await pendingIds()).toEqual([])
    }
  })

  it('has the expiry table of the spec', () => {
    const expiry = Object.fromEntries(kinds.map(([kind, rule]) => [kind, rule.expiresIn]))
    expect(expiry).toEqual({
      healthReportSent: 60 * SECOND,
      healthReportFailed: 10 * MINUTE,
      userLogin: 30 * MINUTE,
      userLogout: 15 * MINUTE,
      systemUpdate: 24 * 60 * MINUTE,
      systemUpdateAvailable: 24 * 60 * MINUTE,
      systemUpdateInstalled: 2 * 60 * MINUTE,
      apiSuccess: 15 * MINUTE,
      apiError: 2 * 60 * MINUTE,
      deviceConnected: 30 * MINUTE,
      deviceDisconnected: 60 * MINUTE,
      junctionStarted: 30 * MINUTE,
      junctionStopped: 60 * MINUTE,
      junctionError: 6 * 60 * MINUTE,
      databaseBackupSuccess: 60 * MINUTE,
      databaseBackupFailure: 12 * 60 * MINUTE,
      backupVerificationFailure: 24 * 60 * MINUTE,
      cloudSyncStarted: 5 * MINUTE,
      authenticationFailure: null,
      sessionExpired: null,
      cloudAuthenticationRequired: null,
      // Beyond the spec's table: source health, like a junction error.
      collectorFailing: 6 * 60 * MINUTE,
      sourceRecovered: 30 * MINUTE,
    })
  })

  it('clips text from other features to the limits instead of failing', async () => {
    const created = await service.notify('apiError', { message: 'x'.repeat(5000), title: 't'.repeat(500) })
    expect(created.message).toHaveLength(2000)
    expect(created.title).toHaveLength(200)
  })
})

describe('create', () => {
  it('fills defaults: info, system, not persistent, no expiry', async () => {
    const created = await service.create({ message: 'hello' })
    expect(created).toMatchObject({
      type: 'info',
      category: 'system',
      title: null,
      duration: null,
      persistent: false,
      expiresAt: null,
      isDelivered: false,
      deliveredAt: null,
      createdAt: clock.now().toISOString(),
    })
  })

  it('never expires a persistent notification, even when given an expiry', async () => {
    const created = await service.create({ message: 'keep', persistent: true, expiresAt: '2026-01-15T12:00:01.000Z' })
    expect(created.expiresAt).toBeNull()
  })

  it('rejects an expiry that is not in the future', async () => {
    await expect(service.create({ message: 'late', expiresAt: clock.now().toISOString() })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    })
  })
})

describe('expiry removal', () => {
  async function seedExpiring() {
    const expiring = await service.create({
      message: 'soon',
      expiresAt: new Date(clock.now().getTime() + MINUTE).toISOString(),
    })
    const lasting = await service.create({
      message: 'later',
      expiresAt: new Date(clock.now().getTime() + DAY).toISOString(),
    })
    const forever = await service.notify('sessionExpired', { message: 'forever' })
    clock.advance(MINUTE)
    return { expiring, lasting, forever }
  }

  it('removes expired rows during a pending fetch', async () => {
    const { lasting, forever } = await seedExpiring()
    expect(await pendingIds()).toEqual([lasting.id, forever.id])
    expect(await rowCount()).toBe(2)
  })

  it('removes expired rows on demand', async () => {
    await seedExpiring()
    expect(await service.removeExpired()).toBe(1)
    expect(await rowCount()).toBe(2)
  })

  it('removes expired rows in maintenance', async () => {
    await seedExpiring()
    expect(await service.maintain()).toEqual({ expired: 1, delivered: 0 })
    expect(await rowCount()).toBe(2)
  })
})

describe('delivery', () => {
  it('acknowledges once; unknown and repeated ids are skipped', async () => {
    const a = await service.create({ message: 'a' })
    const b = await service.create({ message: 'b' })
    expect(await service.acknowledge([a.id, a.id, 'no-such-id'])).toBe(1)
    expect(await service.acknowledge([a.id])).toBe(0)
    expect(await service.get(a.id)).toMatchObject({ isDelivered: true, deliveredAt: clock.now().toISOString() })
    expect(await pendingIds()).toEqual([b.id])
  })

  it('maintenance removes rows delivered more than 30 days ago', async () => {
    const delivered = await service.notify('sessionExpired', { message: 'seen' })
    const unseen = await service.notify('cloudAuthenticationRequired', { message: 'unseen' })
    await service.acknowledge([delivered.id])
    clock.advance(30 * DAY)
    expect(await service.maintain()).toEqual({ expired: 0, delivered: 0 })
    clock.advance(1)
    expect(await service.maintain()).toEqual({ expired: 0, delivered: 1 })
    expect(await pendingIds()).toEqual([unseen.id])
  })

  it('cleanup removes old notifications but keeps persistent ones nobody has seen', async () => {
    const old = await service.create({ message: 'old' })
    const unseen = await service.notify('authenticationFailure', { message: 'unseen' })
    clock.advance(10 * DAY)
    const recent = await service.create({ message: 'recent' })
    expect(await service.cleanup(7)).toBe(1)
    await expect(service.get(old.id)).rejects.toMatchObject({ code: 'NOT_FOUND' })
    expect((await service.get(unseen.id)).id).toBe(unseen.id)
    expect((await service.get(recent.id)).id).toBe(recent.id)
  })
})

describe('pending cursor', () => {
  it('returns notifications after the cursor, delivered or not, so every tab sees each one', async () => {
    const first = await service.pending()
    expect(first).toEqual({ notifications: [], cursor: 0, hasMore: false })
    const a = await service.create({ message: 'a' })
    await service.acknowledge([a.id])
    const next = await service.pending(first.cursor)
    expect(next.notifications.map((n) => n.id)).toEqual([a.id])
    expect(await service.pending(next.cursor)).toEqual({ notifications: [], cursor: next.cursor, hasMore: false })
    // A tab that opens now gets only what nobody has seen.
    expect(await pendingIds()).toEqual([])
  })

  it('a poll that finds nothing new still removes what has expired since', async () => {
    const soon = await service.create({
      message: 'soon',
      expiresAt: new Date(clock.now().getTime() + MINUTE).toISOString(),
    })
    const { cursor } = await service.pending()
    expect(await service.pending(cursor)).toEqual({ notifications: [], cursor, hasMore: false })
    clock.advance(MINUTE - 1)
    expect(await rowCount()).toBe(1)
    expect((await service.pending(cursor)).notifications).toEqual([])
    expect(await rowCount()).toBe(1)
    clock.advance(1)
    expect((await service.pending(cursor)).notifications).toEqual([])
    expect(await rowCount()).toBe(0)
    const later = await service.create({ message: 'later' })
    expect((await service.pending(cursor)).notifications.map((n) => n.id)).toEqual([later.id])
    expect(soon.id).not.toBe(later.id)
  })

  it('pages by 50 with hasMore', async () => {
    for (let i = 0; i < 120; i++) {
      await service.create({ message: `n${i}` })
    }
    const seen: string[] = []
    let cursor: number | undefined
    let pages = 0
    for (;;) {
      const reply = await service.pending(cursor)
      pages++
      seen.push(...reply.notifications.map((n) => n.message))
      cursor = reply.cursor
      if (!reply.hasMore) {
        break
      }
    }
    expect(pages).toBe(3)
    expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => `n${i}`))
  })

  it('has no gaps or duplicates while notifications are created concurrently', async () => {
    const created: string[] = []
    const received: string[] = []
    let cursor = (await service.pending()).cursor
    let creating = true
    const poller = (async () => {
      while (creating) {
        const reply = await service.pending(cursor)
        received.push(...reply.notifications.map((n) => n.id))
        cursor = reply.cursor
        await new Promise((resolve) => setImmediate(resolve))
      }
    })()
    await Promise.all(
      Array.from({ length: 20 }, async (_, writer) => {
        for (let i = 0; i < 15; i++) {
          created.push((await service.create({ message: `w${writer}-${i}` })).id)
        }
      }),
    )
    creating = false
    await poller
    for (let reply = await service.pending(cursor); ; reply = await service.pending(cursor)) {
      received.push(...reply.notifications.map((n) => n.id))
      cursor = reply.cursor
      if (!reply.hasMore) {
        break
      }
    }
    expect(received).toHaveLength(300)
    expect(new Set(received).size).toBe(300)
    expect(new Set(received)).toEqual(new Set(created))
  })
})

describe('history', () => {
  it('pages newest first with filters and a total', async () => {
    for (let i = 0; i < 7; i++) {
      await service.create({ message: `api${i}`, category: 'api', type: i % 2 ? 'error' : 'success' })
      await service.create({ message: `sys${i}`, category: 'system' })
    }
    const first = await service.history({ limit: 3, category: 'api' })
    expect(first.total).toBe(7)
    expect(first.notifications.map((n) => n.message)).toEqual(['api6', 'api5', 'api4'])
    const second = await service.history({ limit: 3, category: 'api', before: first.nextCursor ?? undefined })
    expect(second.notifications.map((n) => n.message)).toEqual(['api3', 'api2', 'api1'])
    const last = await service.history({ limit: 3, category: 'api', before: second.nextCursor ?? undefined })
    expect(last.notifications.map((n) => n.message)).toEqual(['api0'])
    expect(last.nextCursor).toBeNull()
    const errors = await service.history({ category: 'api', type: 'error' })
    expect(errors.notifications.map((n) => n.message)).toEqual(['api5', 'api3', 'api1'])
    expect(errors.total).toBe(3)
  })
})

describe('notifications about a lasting condition', () => {
  it('a repeat updates the open notification; once resolved, the next raise starts a new one', async () => {
    const first = await service.raise('collectorFailing', 'collector:a', { message: 'A is failing: refused' })
    const delivered = await service.pending(0)
    clock.advance(5 * SECOND)
    const repeat = await service.raise('collectorFailing', 'collector:a', { message: 'A is failing: timeout' })
    expect(repeat).toMatchObject({ id: first.id, occurrences: 2, message: 'A is failing: timeout', resolvedAt: null })
    expect(repeat.lastSeenAt).toBe(clock.now().toISOString())
    expect(Date.parse(repeat.expiresAt ?? '')).toBe(
      clock.now().getTime() + notificationKinds.collectorFailing.expiresIn,
    )
    // Not delivered again: the list of pending notifications holds it once.
    expect((await service.pending(delivered.cursor)).notifications).toEqual([])
    await service.raise('collectorFailing', 'collector:b', { message: 'B is failing' })
    expect(await rowCount()).toBe(2)

    const resolved = await service.resolve('collector:a')
    expect(resolved).toMatchObject({ id: first.id, resolvedAt: clock.now().toISOString() })
    expect(await service.resolve('collector:a')).toBeUndefined()
    const next = await service.raise('collectorFailing', 'collector:a', { message: 'A is failing again' })
    expect(next.id).not.toBe(first.id)
    expect(next.occurrences).toBe(1)
  })

  it('an open notification that expired is closed, and the next raise makes a new one', async () => {
    const first = await service.raise('collectorFailing', 'collector:a', { message: 'A is failing' })
    clock.advance(notificationKinds.collectorFailing.expiresIn)
    const next = await service.raise('collectorFailing', 'collector:a', { message: 'A is failing' })
    expect(next.id).not.toBe(first.id)
    expect((await service.get(first.id)).resolvedAt).toEqual(expect.any(String))
  })
})
