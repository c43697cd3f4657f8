import { createServer } from 'node:http'
import { ErrorBody, type Notification } from '@relay/contracts'
import { createTestClock } from '@relay/testkit'
import { Value } from 'typebox/value'
import { afterEach, describe, expect, it } from 'vitest'
import { startRelay, testConfig } from '../../test/app.js'
import { createTestDatabase, silentLog } from '../../test/database.js'
import { createApp } from '../app.js'
import { createNotificationService } from '../notifications/service.js'
import type { CollectorDriver } from './drivers/types.js'
import { closeServers, listenLocally, until } from './local-servers.js'
import * as repo from './repo.js'
import { createSourcesRuntime } from './runtime.js'

const json = { 'content-type': 'application/json' }
afterEach(closeServers)

/** A local JSON API answering `{ temp: 21 }`. */
function jsonApi(): Promise<string> {
  return listenLocally(
    createServer((_req, res) => {
      res.writeHead(200, json)
      res.end(JSON.stringify({ temp: 21 }))
    }),
  )
}

/** A local address nothing listens on: a port that was open a moment ago. */
async function closedPort(): Promise<string> {
  const url = await listenLocally(createServer())
  await closeServers()
  return url
}

describe('source health over the API', () => {
  it('a GenericAPI collector on a closed port turns failing after 3 polls, notifies once, and recovers once fixed', async () => {
    const { app } = await startRelay()
    const collector = (
      await app.inject({
        method: 'POST',
        url: '/api/collectors',
        payload: {
          name: 'Boiler',
          collectorType: 'GenericAPI',
          pollRateMs: 1000,
          settings: { url: await closedPort() },
        },
      })
    ).json()
    expect(collector.health).toMatchObject({ state: 'stopped', consecutiveFailures: 0 })
    const read = async () => (await app.inject({ url: `/api/collectors/${collector.id}` })).json()
    await app.inject({ method: 'POST', url: `/api/collectors/${collector.id}/start` })
    const starting = await until(read, (c) => c.health.consecutiveFailures >= 1)
    expect(starting.health).toMatchObject({ state: 'starting', consecutiveFailures: 1 })
    expect(starting.running).toBe(true)

    const failing = await until(read, (c) => c.health.state === 'failing')
    expect(failing.health).toMatchObject({ state: 'failing', consecutiveFailures: 3, reason: expect.any(String) })
    const titled = async (title: string) =>
      (await app.inject({ url: '/api/notifications/history?limit=100' }))
        .json()
        .notifications.filter((n: Notification) => n.title === title) as Notification[]
    // One more failed poll updates the same notification instead of adding one.
    const repeated = await until(
      () => titled('Collector failing'),
      (found) => (found[0]?.occurrences ?? 0) >= 2,
    )
    expect(repeated).toHaveLength(1)
    expect(repeated[0]).toMatchObject({ type: 'error', category: 'system', resolvedAt: null })
    expect(repeated[0]?.message).toContain('Boiler is failing')
    const stats = (await app.inject({ url: '/api/collectors/stats' })).json()
    expect(stats.collectors).toMatchObject({ active: 1, failing: 1, degraded: 0 })

    await app.inject({
      method: 'PATCH',
      url: `/api/collectors/${collector.id}`,
      payload: { settings: { url: await jsonApi() } },
    })
    const healthy = await until(read, (c) => c.health.state === 'healthy')
    expect(healthy.health).toMatchObject({ state: 'healthy', reason: null, consecutiveFailures: 0 })
    const resolved = await until(
      () => titled('Collector failing'),
      (found) => found[0]?.resolvedAt !== null,
    )
    expect(resolved).toHaveLength(1)
    expect(resolved[0]?.resolvedAt).toEqual(expect.any(String))
    expect(
      await until(
        () => titled('Recovered'),
        (found) => found.length > 0,
      ),
    ).toHaveLength(1)
    expect((await app.inject({ url: '/api/collectors/stats' })).json().collectors).toMatchObject({
      active: 1,
      failing: 0,
    })
    const sensors = (await app.inject({ url: `/api/collectors/${collector.id}/sensors` })).json()
    expect(sensors[0].health.state).toBe('healthy')
  }, 20_000)

  it('leaves EventEngine collectors out of the polling figures', async () => {
    const { app } = await startRelay()
    const start = async (payload: object) => {
      const { id } = (await app.inject({ method: 'POST', url: '/api/collectors', payload })).json()
      await app.inject({ method: 'POST', url: `/api/collectors/${id}/start` })
      return id as string
    }
    await start({ name: 'Engine', collectorType: 'EventEngine' })
    const virtual = await start({ name: 'V', collectorType: 'Virtual', settings: { sensorCount: 2 } })
    await until(
      async () => (await app.inject({ url: `/api/collectors/${virtual}` })).json(),
      (c) => c.health.state === 'healthy',
    )
    const stats = (await app.inject({ url: '/api/collectors/stats' })).json()
    expect(stats.collectors).toMatchObject({ active: 1, total: 1, failing: 0, degraded: 0 })
  })
})

describe('junctions need collectors and targets', () => {
  async function setup() {
    const { app, dataDir } = await startRelay()
    const collector = (
      await app.inject({ method: 'POST', url: '/api/collectors', payload: { name: 'H', collectorType: 'Host' } })
    ).json()
    const stream = (
      await app.inject({ method: 'POST', url: '/api/connections/streams', payload: { name: 'S', type: 'Virtual' } })
    ).json()
    const targets = [{ streamId: stream.id, sendRateMs: 1000 }]
    const payload = { name: 'J', collectorIds: [collector.id], targets }
    const createJunction = async () => (await app.inject({ method: 'POST', url: '/api/junctions', payload })).json()
    return { app, dataDir, collector, targets, createJunction }
  }

  it.each([
    ['no collectors', 'collectorIds', (targets: object[]) => ({ collectorIds: [], targets })],
    ['no targets', 'targets', () => ({ targets: [] })],
  ])('refuses a junction with %s at create and update', async (_, field, links) => {
    const { app, collector, targets, createJunction } = await setup()
    const body = { name: 'J', collectorIds: [collector.id], ...links(targets) }
    const created = await app.inject({ method: 'POST', url: '/api/junctions', payload: body })
    expect(created.statusCode).toBe(400)
    expect(Value.Check(ErrorBody, created.json())).toBe(true)
    expect(created.json()).toMatchObject({
      code: 'INVALID_REQUEST',
      details: [{ path: `body/${field}`, message: expect.stringContaining('must list at least one') }],
    })
    expect((await app.inject({ url: '/api/junctions' })).json()).toEqual([])

    const junction = await createJunction()
    expect(junction.health).toMatchObject({ state: 'stopped', reason: null })
    const patched = await app.inject({ method: 'PATCH', url: `/api/junctions/${junction.id}`, payload: links(targets) })
    expect(patched.statusCode).toBe(400)
    expect((await app.inject({ url: `/api/junctions/${junction.id}` })).json()).toMatchObject({
      collectorIds: [collector.id],
      targets,
    })
  })

  it('a junction left without collectors stays idle: stopped with the reason, and its start is refused', async () => {
    const { app, collector, createJunction } = await setup()
    const junction = await createJunction()
    // Deleting its only collector leaves the junction without any.
    await app.inject({ method: 'DELETE', url: `/api/collectors/${collector.id}` })
    const shown = (await app.inject({ url: `/api/junctions/${junction.id}` })).json()
    expect(shown).toMatchObject({ status: 'Idle', collectorIds: [] })
    expect(shown.health).toMatchObject({ state: 'stopped', reason: expect.stringContaining('at least one collector') })
    const start = await app.inject({ method: 'POST', url: `/api/junctions/${junction.id}/start` })
    expect(start.statusCode).toBe(409)
    expect(start.json().error).toContain('at least one collector')
    expect((await app.inject({ url: `/api/junctions/${junction.id}` })).json().status).toBe('Idle')
  })
})

describe('health settings', () => {
  const url = '/api/sources/health-settings'

  it('start at 3 failures and 2 successes, update a subset and keep it across a restart', async () => {
    const { app, dataDir, webDir } = await startRelay()
    expect((await app.inject({ url })).json()).toEqual({
      failuresBeforeFailing: 3,
      successesBeforeHealthy: 2,
      historyRetentionDays: 7,
    })
    const updated = await app.inject({ method: 'PUT', url, payload: { failuresBeforeFailing: 5 } })
    expect(updated.json()).toEqual({ failuresBeforeFailing: 5, successesBeforeHealthy: 2, historyRetentionDays: 7 })
    await app.close()
    const restarted = await createApp(testConfig(dataDir, { RELAY_WEB_DIR: webDir }))
    expect((await restarted.inject({ url })).json()).toEqual({
      failuresBeforeFailing: 5,
      successesBeforeHealthy: 2,
      historyRetentionDays: 7,
    })
    await restarted.close()
  })

  it.each([
    ['zero failures', { failuresBeforeFailing: 0 }],
    ['over 20 failures', { failuresBeforeFailing: 21 }],
    ['zero successes', { successesBeforeHealthy: 0 }],
    ['a fraction', { successesBeforeHealthy: 1.5 }],
    ['a number as a string', { failuresBeforeFailing: '3' }],
    ['an unknown setting', { failuresBeforeDegraded: 2 }],
    ['nothing to change', {}],
    ['a list', [3]],
  ])('rejects %s with 400 and changes nothing', async (_, payload) => {
    const { app } = await startRelay()
    const res = await app.inject({ method: 'PUT', url, payload: JSON.stringify(payload), headers: json })
    expect(res.statusCode).toBe(400)
    expect(Value.Check(ErrorBody, res.json())).toBe(true)
    expect((await app.inject({ url })).json()).toEqual({
      failuresBeforeFailing: 3,
      successesBeforeHealthy: 2,
      historyRetentionDays: 7,
    })
  })
})

describe('notifications under a flapping source', () => {
  it('one notification per failure episode and one recovery each, thanks to hysteresis', async () => {
    const database = await createTestDatabase()
    const clock = createTestClock()
    const notifications = createNotificationService({ db: database.db, clock, log: silentLog })
    // F = failed poll, S = good one; with 3 failures to fail and 2 successes to recover:
    // episode 1 (FFF, then S F S F never two good in a row), recovery (SS), a flap below the
    // threshold (FF S FF S), episode 2 (FFF), recovery (SS).
    const script = [...'FFFSFSFSS', ...'FFSFFS', ...'FFFSS']
    let polls = 0
    const driver: CollectorDriver = {
      async fetch() {
        const step = script[polls++] ?? 'S'
        clock.advance(1000)
        if (step === 'F') {
          throw new Error('connect ECONNREFUSED')
        }
        return [{ externalId: 't', name: 't', unit: null, value: 1 }]
      },
      async close() {},
    }
    const runtime = createSourcesRuntime({
      db: database.db,
      clock,
      log: silentLog,
      notifications,
      drivers: {
        collector: () => driver,
        stream: () => {
          throw new Error('no streams here')
        },
      },
    })
    const at = clock.now().toISOString()
    await repo.insertCollector(database.db, {
      id: crypto.randomUUID(),
      name: 'Flappy',
      collector_type: 'Virtual',
      poll_rate_ms: 5,
      settings: '{}',
      active: 1,
      created_at: at,
      updated_at: at,
    })
    const [row] = await repo.listCollectors(database.db)
    await runtime.syncCollector(row?.id ?? '', () => null)
    await until(
      async () => polls,
      (count) => count > script.length + 1,
    )
    await runtime.close()
    const rows = await database.db.selectFrom('notifications').selectAll().orderBy('seq').execute()
    expect(rows.map((r) => [r.title, r.occurrences, r.resolved_at !== null])).toEqual([
      ['Collector failing', 3, true],
      ['Recovered', 1, false],
      ['Collector failing', 1, true],
      ['Recovered', 1, false],
    ])
    expect(runtime.collectorHealth(row?.id ?? '')).toBeUndefined()
    await database.dispose()
  })
})
