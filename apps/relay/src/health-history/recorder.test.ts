import { healthHistoryLimits, MINUTE, SECOND } from '@relay/contracts'
import { createTestClock, type TestClock } from '@relay/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase, silentLog } from '../../test/database.js'
import type { HealthSnapshot } from '../health-states/machine.js'
import { minuteOf } from './minutes.js'
import { createHistoryQueries } from './query.js'
import { createHealthHistory } from './recorder.js'

type TestDatabase = Awaited<ReturnType<typeof createTestDatabase>>
const opened: TestDatabase[] = []
afterEach(async () => {
  for (const database of opened.splice(0)) {
    await database.dispose()
  }
})

async function setup(retentionDays = 7) {
  const database = await createTestDatabase()
  opened.push(database)
  const clock = createTestClock('2026-01-15T00:00:00.000Z')
  const settings = { retentionDays }
  const history = createHealthHistory({
    db: database.db,
    clock,
    log: silentLog,
    retentionDays: async () => settings.retentionDays,
  })
  const queries = createHistoryQueries({ db: database.db, clock, flush: history.flush })
  const collectorId = crypto.randomUUID()
  await addCollector(database, collectorId, clock)
  return { db: database.db, database, clock, settings, history, queries, item: `collector:${collectorId}` }
}

async function addCollector(database: TestDatabase, id: string, clock: TestClock) {
  const at = clock.now().toISOString()
  await database.db
    .insertInto('collectors')
    .values({
      id,
      name: 'Boiler',
      collector_type: 'Virtual',
      poll_rate_ms: 5000,
      settings: '{}',
      active: 1,
      created_at: at,
      updated_at: at,
    })
    .execute()
}

const count = async (db: TestDatabase['db'], table: 'health_minutes' | 'sensor_minutes' | 'health_transitions') =>
  Number(
    (
      await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

const snapshot = (state: HealthSnapshot['state'], since: string, reason: string | null = null): HealthSnapshot => ({
  state,
  since,
  reason,
  consecutiveFailures: 0,
  consecutiveSuccesses: 0,
})

describe('health history recorder', () => {
  it('sums outcomes in memory and writes one row per minute on flush, merging a minute flushed twice', async () => {
    const { db, clock, history, queries, item } = await setup()
    const temp = (value: number) => [{ externalId: 'temp', name: 'Temp', unit: '°C', value }]
    history.outcome(item, { ok: true }, { latencyMs: 10, readings: temp(20) })
    clock.advance(20 * SECOND)
    history.outcome(item, { ok: false, error: 'connect ECONNREFUSED' }, { latencyMs: 30 })
    expect(await count(db, 'health_minutes')).toBe(0)
    await history.flush()
    expect(await count(db, 'health_minutes')).toBe(1)
    // The same minute again, after a flush: the row is merged, not repeated.
    clock.advance(20 * SECOND)
    history.outcome(item, { ok: true }, { latencyMs: 50, readings: temp(26) })
    clock.advance(30 * SECOND)
    history.outcome(item, { ok: true }, { latencyMs: 4, readings: temp(23) })
    await history.flush()
    expect(await count(db, 'health_minutes')).toBe(2)
    // Sensor values are kept per 10-minute slot: both minutes fall in one.
    expect(await count(db, 'sensor_minutes')).toBe(1)

    const reply = await queries.history({ item, from: '2026-01-15T00:00:00.000Z', to: '2026-01-15T00:05:00.000Z' })
    expect(reply.bucketMinutes).toBe(1)
    expect(reply.buckets).toEqual([
      {
        start: '2026-01-15T00:00:00.000Z',
        ok: 2,
        failed: 1,
        meanLatencyMs: 30,
        maxLatencyMs: 50,
        lastError: 'connect ECONNREFUSED',
      },
      { start: '2026-01-15T00:01:00.000Z', ok: 1, failed: 0, meanLatencyMs: 4, maxLatencyMs: 4, lastError: null },
    ])
    expect(reply.sensors).toEqual([
      {
        sensor: 'temp',
        name: null,
        unit: null,
        points: [{ start: '2026-01-15T00:00:00.000Z', min: 20, max: 26, avg: 23, last: 23 }],
      },
    ])
  })

  it('re-aggregates minutes into larger buckets aligned on the range start', async () => {
    const { clock, history, queries, item } = await setup()
    // Ten minutes, two polls each: 1 failure in minute 3 and 7; latency = minute number.
    for (let minute = 0; minute < 10; minute++) {
      clock.set(new Date(Date.UTC(2026, 0, 15, 0, minute, 10)))
      history.outcome(
        item,
        { ok: true },
        { latencyMs: minute, readings: [{ externalId: 'v', name: 'v', unit: null, value: minute }] },
      )
      clock.advance(30 * SECOND)
      const failed = minute === 3 || minute === 7
      history.outcome(item, failed ? { ok: false, error: `timeout ${minute}` } : { ok: true }, {
        latencyMs: minute,
        readings: [{ externalId: 'v', name: 'v', unit: null, value: minute + 0.5 }],
      })
    }
    const reply = await queries.history({
      item,
      from: '2026-01-15T00:00:00.000Z',
      to: '2026-01-15T00:10:00.000Z',
      bucket: 5,
    })
    expect(reply.buckets).toEqual([
      {
        start: '2026-01-15T00:00:00.000Z',
        ok: 9,
        failed: 1,
        meanLatencyMs: 2,
        maxLatencyMs: 4,
        lastError: 'timeout 3',
      },
      {
        start: '2026-01-15T00:05:00.000Z',
        ok: 9,
        failed: 1,
        meanLatencyMs: 7,
        maxLatencyMs: 9,
        lastError: 'timeout 7',
      },
    ])
    // Sensor points span whole 10-minute slots, whatever the smaller bucket asked for.
    expect(reply.sensors[0]?.points).toEqual([
      { start: '2026-01-15T00:00:00.000Z', min: 0, max: 9.5, avg: 4.75, last: 9.5 },
    ])
    // Without a bucket size, the smallest that keeps a reply within the bound: a week in 7-minute buckets.
    const week = await queries.history({ item, from: '2026-01-08T00:10:00.000Z', to: '2026-01-15T00:10:00.000Z' })
    expect(week.bucketMinutes).toBe(7)
    expect(week.buckets.reduce((sum, bucket) => sum + bucket.ok + bucket.failed, 0)).toBe(20)
  })

  it('records changes of state, not repeats, and pages them newest first', async () => {
    const { clock, history, queries, item } = await setup()
    const at = () => clock.now().toISOString()
    const states: HealthSnapshot[] = [snapshot('starting', at())]
    history.changed(item, undefined, states[0])
    for (const [state, reason] of [
      ['healthy', null],
      ['healthy', null],
      ['degraded', 'x'.repeat(1000)],
      ['failing', 'HTTP 500'],
      ['healthy', null],
    ] as const) {
      clock.advance(MINUTE)
      const before = states.at(-1)
      const after = snapshot(state, before?.state === state ? (before?.since ?? at()) : at(), reason)
      history.changed(item, before, after)
      states.push(after)
    }
    const first = await queries.events({ item, limit: 3 })
    expect(first.events.map((event) => [event.from, event.to])).toEqual([
      ['failing', 'healthy'],
      ['degraded', 'failing'],
      ['healthy', 'degraded'],
    ])
    expect(first.events[1]).toMatchObject({ item, reason: 'HTTP 500', at: '2026-01-15T00:04:00.000Z' })
    expect(first.events[2]?.reason).toHaveLength(healthHistoryLimits.textMaxLength)
    const second = await queries.events({ item, limit: 3, before: first.nextCursor ?? 0 })
    expect(second.events.map((event) => [event.from, event.to])).toEqual([
      ['starting', 'healthy'],
      ['stopped', 'starting'],
    ])
    expect(second.nextCursor).toBeNull()
    const ranged = await queries.events({ from: '2026-01-15T00:01:00.000Z', to: '2026-01-15T00:04:00.000Z' })
    expect(ranged.events.map((event) => event.to)).toEqual(['degraded', 'healthy'])
  })

  it('keeps at most 1 440 rows per item and 144 per sensor a day, whatever the poll rate and flush timing', async () => {
    const { db, clock, history, item } = await setup()
    const sensors = ['a', 'b', 'c']
    let flushes = 0
    // A day of polls every 5 s, flushed at uneven times (every 7 to 97 s), so minutes are often split.
    let nextFlush = clock.now().getTime() + 7 * SECOND
    const end = clock.now().getTime() + 24 * 60 * MINUTE
    let previous = snapshot('starting', clock.now().toISOString())
    for (let poll = 0; clock.now().getTime() < end; poll++) {
      const ok = poll % 50 !== 0
      history.outcome(item, ok ? { ok: true } : { ok: false, error: 'boom' }, {
        latencyMs: 12,
        readings: sensors.map((id) => ({ externalId: id, name: id, unit: null, value: poll })),
      })
      const state = ok ? 'healthy' : 'degraded'
      const next = snapshot(state, previous.state === state ? previous.since : clock.now().toISOString())
      history.changed(item, previous, next)
      previous = next
      clock.advance(5 * SECOND)
      if (clock.now().getTime() >= nextFlush) {
        await history.flush()
        flushes++
        nextFlush += (7 + ((flushes * 30) % 91)) * SECOND
      }
    }
    await history.flush()
    const transitions = await count(db, 'health_transitions')
    expect(await count(db, 'health_minutes')).toBe(1440)
    expect(await count(db, 'sensor_minutes')).toBe((1440 / healthHistoryLimits.sensorSlotMinutes) * sensors.length)
    // Every 50th poll fails and the next one recovers: two changes each.
    expect(transitions).toBe(2 * Math.ceil(17_280 / 50))
    const totals = await db
      .selectFrom('health_minutes')
      .select((eb) => [eb.fn.sum<number>('ok_count').as('ok'), eb.fn.sum<number>('fail_count').as('failed')])
      .executeTakeFirstOrThrow()
    expect(Number(totals.ok) + Number(totals.failed)).toBe(17_280)
  })

  it('keeps the values of the first 20 numeric sensors of a collector, booleans as 0 and 1', async () => {
    const { db, history, queries, item } = await setup()
    const readings = [
      ...Array.from({ length: 60 }, (_, i) => ({ externalId: `n${i}`, name: `n${i}`, unit: null, value: i })),
      { externalId: 'text', name: 'text', unit: null, value: 'on' },
      { externalId: 'flag', name: 'flag', unit: null, value: true },
    ]
    history.outcome(item, { ok: true }, { latencyMs: 1, readings })
    await history.flush()
    expect(await count(db, 'sensor_minutes')).toBe(healthHistoryLimits.sensorsPerCollector)
    const reply = await queries.history({ item })
    expect(reply.sensors.map((series) => series.sensor)).not.toContain('text')
    expect(reply.sensors.map((series) => series.sensor)).not.toContain('flag')
  })

  it('prunes what is older than the retention, and all history of deleted items', async () => {
    const { db, database, clock, settings, history, queries, item } = await setup(7)
    const goneId = crypto.randomUUID()
    await addCollector(database, goneId, clock)
    const gone = `collector:${goneId}`
    // One poll a day for 10 days, and a change every other day (days 0, 2, 4, 6, 8).
    for (let day = 0; day < 10; day++) {
      for (const key of [item, gone]) {
        history.outcome(
          key,
          { ok: true },
          { latencyMs: 1, readings: [{ externalId: 't', name: 't', unit: null, value: day }] },
        )
        history.changed(
          key,
          snapshot('healthy', ''),
          snapshot(day % 2 ? 'healthy' : 'degraded', clock.now().toISOString()),
        )
      }
      clock.advance(24 * 60 * MINUTE)
    }
    await history.flush()
    await db.deleteFrom('collectors').where('id', '=', goneId).execute()
    // Now day 10 00:00: days 3 to 9 are within 7 days.
    expect(await history.prune()).toEqual({ minutes: 2 * 3 + 2 * 10, transitions: 2 + 5, series: 2 })
    expect(await count(db, 'health_minutes')).toBe(7)
    expect(await count(db, 'sensor_minutes')).toBe(7)
    expect(await count(db, 'health_transitions')).toBe(3)
    const kept = await db.selectFrom('health_minutes').select('minute').orderBy('minute').execute()
    expect(kept[0]?.minute).toBe(minuteOf(new Date('2026-01-18T00:00:00.000Z')))

    settings.retentionDays = 1
    expect(await history.prune()).toMatchObject({ minutes: 2 * 6, transitions: 3 })
    // The series removed with the deleted collector are not reused: new outcomes still land.
    history.outcome(item, { ok: true }, { latencyMs: 1 })
    const reply = await queries.history({ item, from: '2026-01-24T00:00:00.000Z', to: '2026-01-25T00:01:00.000Z' })
    expect(reply.buckets.map((bucket) => bucket.ok)).toEqual([1, 1])
  })
})
