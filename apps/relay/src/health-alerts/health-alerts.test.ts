import { createServer } from 'node:http'
import { ErrorBody, MINUTE, type Notification } from '@relay/contracts'
import { createTestClock } from '@relay/testkit'
import { Value } from 'typebox/value'
import { afterEach, describe, expect, it } from 'vitest'
import { startRelay, testConfig } from '../../test/app.js'
import { createApp, type RelayApp } from '../app.js'
import { closeServers, listenLocally, until } from '../sources/local-servers.js'

afterEach(closeServers)

/** A local JSON API that answers `{ temp: 21 }` while up and 500 while down. */
async function switchableApi(up: boolean) {
  const state = { up }
  const url = await listenLocally(
    createServer((_req, res) => {
      res.writeHead(state.up ? 200 : 500, { 'content-type': 'application/json' })
      res.end(JSON.stringify(state.up ? { temp: 21 } : { error: 'boom' }))
    }),
  )
  return {
    url,
    set(next: boolean) {
      state.up = next
    },
  }
}

/** A started GenericAPI collector polling `url` every second, and how to read it back. */
async function startedCollector(app: RelayApp, url: string) {
  const payload = { name: 'Boiler', collectorType: 'GenericAPI', pollRateMs: 1000, settings: { url } }
  const { id } = (await app.inject({ method: 'POST', url: '/api/collectors', payload })).json()
  await app.inject({ method: 'POST', url: `/api/collectors/${id}/start` })
  const read = async () => (await app.inject({ url: `/api/collectors/${id}` })).json()
  return { id: id as string, item: `collector:${id}`, read }
}

async function titled(app: RelayApp, title: string): Promise<Notification[]> {
  const { notifications } = (await app.inject({ url: '/api/notifications/history?limit=100' })).json()
  return (notifications as Notification[]).filter((n) => n.title === title)
}

/** The dashboard issues about one item. */
async function issuesOf(app: RelayApp, item: string) {
  const stats = (await app.inject({ url: '/api/collectors/stats' })).json()
  return [...stats.collectors.details, ...stats.sensors.details].filter((issue) => issue.item === item)
}

const post = (app: RelayApp, url: string, payload: object) => app.inject({ method: 'POST', url, payload })

describe('acknowledging a warning', () => {
  it('keeps the warning listed with its note until the collector recovers; the next failure is unacknowledged', async () => {
    const clock = createTestClock()
    const { app } = await startRelay({ clock })
    const api = await switchableApi(false)
    const collector = await startedCollector(app, api.url)
    await until(collector.read, (c) => c.health.state === 'failing', 10_000)

    const acknowledged = await post(app, '/api/health/acknowledgements', {
      item: collector.item,
      note: 'Boiler room flooded',
    })
    expect(acknowledged.statusCode).toBe(200)
    const mark = { at: clock.now().toISOString(), note: 'Boiler room flooded' }
    expect(acknowledged.json()).toEqual({ item: collector.item, ...mark })
    expect((await collector.read()).acknowledged).toEqual(mark)
    const issues = await issuesOf(app, collector.item)
    expect(issues).toEqual([expect.objectContaining({ type: 'error', area: 'Collectors', acknowledged: mark })])
    expect((await app.inject({ url: '/api/health/acknowledgements' })).json()).toEqual([
      { item: collector.item, ...mark },
    ])

    api.set(true)
    await until(collector.read, (c) => c.health.state === 'healthy', 10_000)
    expect((await collector.read()).acknowledged).toBeUndefined()
    expect((await app.inject({ url: '/api/health/acknowledgements' })).json()).toEqual([])
    // Nothing left to acknowledge while it works.
    const healthy = await post(app, '/api/health/acknowledgements', { item: collector.item })
    expect(healthy.statusCode).toBe(409)
    expect(healthy.json()).toMatchObject({ success: false, code: 'CONFLICT' })

    api.set(false)
    const failingAgain = await until(collector.read, (c) => c.health.state === 'failing', 10_000)
    expect(failingAgain.acknowledged).toBeUndefined()
    expect(await issuesOf(app, collector.item)).toEqual([
      expect.not.objectContaining({ acknowledged: expect.anything() }),
    ])
  }, 30_000)

  it('is taken back with DELETE, without a note is null, and survives a restart', async () => {
    const { app, dataDir, webDir } = await startRelay()
    const api = await switchableApi(false)
    const collector = await startedCollector(app, api.url)
    await until(collector.read, (c) => c.lastFetchTime !== null && !c.lastFetchSuccessful)
    // A failed fetch is a warning on the dashboard before the item is failing.
    expect((await post(app, '/api/health/acknowledgements', { item: collector.item })).json()).toMatchObject({
      note: null,
    })
    const url = `/api/health/acknowledgements/${collector.item}`
    expect((await app.inject({ method: 'DELETE', url })).json()).toEqual({ success: true })
    expect((await collector.read()).acknowledged).toBeUndefined()
    const again = await app.inject({ method: 'DELETE', url })
    expect(again.statusCode).toBe(404)
    expect(Value.Check(ErrorBody, again.json())).toBe(true)

    await post(app, '/api/health/acknowledgements', { item: collector.item, note: 'known' })
    await app.close()
    const restarted = await createApp(testConfig(dataDir, { RELAY_WEB_DIR: webDir }))
    try {
      expect((await restarted.inject({ url: '/api/health/acknowledgements' })).json()).toEqual([
        expect.objectContaining({ item: collector.item, note: 'known' }),
      ])
      expect((await restarted.inject({ url: `/api/collectors/${collector.id}` })).json().acknowledged).toMatchObject({
        note: 'known',
      })
    } finally {
      await restarted.close()
    }
  }, 20_000)
})

describe('silences', () => {
  it('keep a silenced collector from notifying, end by themselves, and the next failure notifies again', async () => {
    const clock = createTestClock()
    const { app } = await startRelay({ clock })
    const api = await switchableApi(false)
    const payload = { name: 'Boiler', collectorType: 'GenericAPI', pollRateMs: 1000, settings: { url: api.url } }
    const { id } = (await app.inject({ method: 'POST', url: '/api/collectors', payload })).json()
    const item = `collector:${id}`
    const created = await post(app, '/api/health/silences', { target: { item }, minutes: 5, reason: 'Maintenance' })
    expect(created.statusCode).toBe(201)
    const until5 = new Date(clock.now().getTime() + 5 * MINUTE).toISOString()
    expect(created.json()).toEqual({
      id: expect.any(String),
      target: { item },
      createdAt: clock.now().toISOString(),
      until: until5,
      reason: 'Maintenance',
    })
    expect((await app.inject({ url: '/api/health/silences' })).json()).toEqual([created.json()])

    await app.inject({ method: 'POST', url: `/api/collectors/${id}/start` })
    const read = async () => (await app.inject({ url: `/api/collectors/${id}` })).json()
    const failing = await until(read, (c) => c.health.state === 'failing' && c.health.consecutiveFailures >= 4, 10_000)
    expect(failing.health.state).toBe('failing')
    expect(failing.silenced).toEqual({ until: until5, reason: 'Maintenance' })
    expect(await issuesOf(app, item)).toEqual([
      expect.objectContaining({ silenced: { until: until5, reason: 'Maintenance' } }),
    ])
    expect(await titled(app, 'Collector failing')).toEqual([])

    // Five minutes on the silence is over; the episode it kept quiet stays quiet to its end.
    clock.advance(5 * MINUTE)
    expect((await app.inject({ url: '/api/health/silences' })).json()).toEqual([])
    expect((await read()).silenced).toBeUndefined()
    expect(await issuesOf(app, item)).toEqual([expect.not.objectContaining({ silenced: expect.anything() })])
    const failures = (await read()).health.consecutiveFailures
    await until(read, (c) => c.health.consecutiveFailures >= failures + 2, 10_000)
    expect(await titled(app, 'Collector failing')).toEqual([])
    api.set(true)
    await until(read, (c) => c.health.state === 'healthy', 10_000)
    expect(await titled(app, 'Recovered')).toEqual([])

    api.set(false)
    const raised = await until(
      () => titled(app, 'Collector failing'),
      (found) => found.length > 0,
      10_000,
    )
    expect(raised).toEqual([expect.objectContaining({ message: expect.stringContaining('Boiler is failing') })])
  }, 40_000)

  it('silence a whole area, last across a restart, and end early with DELETE', async () => {
    const { app, dataDir, webDir } = await startRelay()
    const api = await switchableApi(false)
    const silence = (await post(app, '/api/health/silences', { target: { area: 'Collectors' }, minutes: 60 })).json()
    expect(silence).toMatchObject({ target: { area: 'Collectors' }, reason: null })
    const first = await startedCollector(app, api.url)
    const second = await startedCollector(app, api.url)
    for (const collector of [first, second]) {
      const failing = await until(collector.read, (c) => c.health.state === 'failing', 10_000)
      expect(failing.silenced).toEqual({ until: silence.until, reason: null })
    }
    expect(await titled(app, 'Collector failing')).toEqual([])
    // Streams are another area.
    const stream = (await post(app, '/api/connections/streams', { name: 'Screen', type: 'Virtual' })).json()
    expect(stream.silenced).toBeUndefined()

    await app.close()
    const restarted = await createApp(testConfig(dataDir, { RELAY_WEB_DIR: webDir }))
    try {
      expect((await restarted.inject({ url: '/api/health/silences' })).json()).toEqual([silence])
      const url = `/api/health/silences/${silence.id}`
      expect((await restarted.inject({ method: 'DELETE', url })).json()).toEqual({ success: true })
      expect((await restarted.inject({ url: '/api/health/silences' })).json()).toEqual([])
      expect((await restarted.inject({ url: `/api/collectors/${first.id}` })).json().silenced).toBeUndefined()
      const again = await restarted.inject({ method: 'DELETE', url })
      expect(again.statusCode).toBe(404)
      expect(again.json()).toMatchObject({ success: false, code: 'NOT_FOUND' })
    } finally {
      await restarted.close()
    }
  }, 30_000)

  it('are removed with the item they silence', async () => {
    const { app } = await startRelay()
    const { id } = (await post(app, '/api/connections/streams', { name: 'Screen', type: 'Virtual' })).json()
    await post(app, '/api/health/silences', { target: { item: `stream:${id}` }, minutes: 15 })
    expect((await app.inject({ url: `/api/connections/streams/${id}` })).json().silenced).toMatchObject({
      reason: null,
    })
    await app.inject({ method: 'DELETE', url: `/api/connections/streams/${id}` })
    expect((await app.inject({ url: '/api/health/silences' })).json()).toEqual([])
  })
})

describe('bad input', () => {
  const missing = '00000000-0000-4000-8000-000000000000'
  const long = 'x'.repeat(501)

  it.each([
    ['malformed JSON', '/api/health/acknowledgements', '{"item": '],
    ['malformed JSON', '/api/health/silences', '{"target": {'],
    ['an item of the wrong type', '/api/health/acknowledgements', { item: 42 }],
    ['an item that is no item', '/api/health/acknowledgements', { item: 'collector-fetch-failed-1' }],
    ['a junction, which has no warnings of its own', '/api/health/acknowledgements', { item: `junction:${missing}` }],
    ['a note over 500 characters', '/api/health/acknowledgements', { item: `collector:${missing}`, note: long }],
    ['an unknown field', '/api/health/acknowledgements', { item: `collector:${missing}`, extra: 1 }],
    ['minutes as text', '/api/health/silences', { target: { area: 'Streams' }, minutes: '60' }],
    ['fewer than 5 minutes', '/api/health/silences', { target: { area: 'Streams' }, minutes: 4 }],
    ['more than 7 days', '/api/health/silences', { target: { area: 'Streams' }, minutes: 7 * 24 * 60 + 1 }],
    ['a fraction of a minute', '/api/health/silences', { target: { area: 'Streams' }, minutes: 5.5 }],
    ['a reason over 500 characters', '/api/health/silences', { target: { area: 'Streams' }, minutes: 5, reason: long }],
    ['an unknown area', '/api/health/silences', { target: { area: 'Toasters' }, minutes: 5 }],
    [
      'an item and an area',
      '/api/health/silences',
      { target: { item: `stream:${missing}`, area: 'Streams' }, minutes: 5 },
    ],
    ['no target', '/api/health/silences', { minutes: 5 }],
  ])('refuses %s with 400 (%s)', async (_, url, payload) => {
    const { app } = await startRelay()
    const response = await app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    })
    expect(response.statusCode).toBe(400)
    expect(Value.Check(ErrorBody, response.json())).toBe(true)
    expect(response.json().code).toBe('INVALID_REQUEST')
  })

  it('answers 404 for unknown items and silences', async () => {
    const { app } = await startRelay()
    const refusals = [
      await post(app, '/api/health/acknowledgements', { item: `collector:${missing}` }),
      await post(app, '/api/health/silences', { target: { item: `junction:${missing}` }, minutes: 5 }),
      await app.inject({ method: 'DELETE', url: `/api/health/acknowledgements/stream:${missing}` }),
      await app.inject({ method: 'DELETE', url: `/api/health/silences/${missing}` }),
    ]
    for (const response of refusals) {
      expect(response.statusCode).toBe(404)
      expect(response.json()).toMatchObject({ success: false, code: 'NOT_FOUND' })
    }
    const badId = await app.inject({ method: 'DELETE', url: '/api/health/silences/not-an-id' })
    expect(badId.statusCode).toBe(400)
    const badItem = await app.inject({ method: 'DELETE', url: '/api/health/acknowledgements/sensor:1' })
    expect(badItem.statusCode).toBe(400)
  })
})
