import { createServer, type Server } from 'node:http'
import { ErrorBody } from '@relay/contracts'
import { createTestClock, tempDir } from '@relay/testkit'
import { Value } from 'typebox/value'
import { afterEach, describe, expect, it } from 'vitest'
import { startRelay, testConfig } from '../../test/app.js'
import { createApp, type RelayApp } from '../app.js'
import { createDrivers } from './drivers/index.js'
import { closeServers, listenLocally, servers, until } from './local-servers.js'
import { createReach } from './reach.js'
import { createWebSocketHub } from './websocket-hub.js'

const json = { 'content-type': 'application/json' }

/**
 * A local JSON API whose document the test changes, and a receiver that records what streams POST;
 * `requests` lists every request's path and Authorization header.
 */
async function localServer(handler: (body: string) => { status: number; body?: unknown }) {
  const received: unknown[] = []
  const requests: { path: string | undefined; authorization: string | undefined }[] = []
  const server: Server = createServer((req, res) => {
    requests.push({ path: req.url, authorization: req.headers.authorization })
    let body = ''
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      if (req.method === 'POST') {
        received.push(JSON.parse(body))
      }
      const answer = handler(body)
      res.writeHead(answer.status, { 'content-type': 'application/json' })
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body))
    })
  })
  const url = await listenLocally(server)
  return { url, received, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

afterEach(closeServers)

describe('sources API', () => {
  it('creates, reads, updates and deletes collectors, streams and junctions', async () => {
    const { app } = await startRelay()
    const collector = await app.inject({
      method: 'POST',
      url: '/api/collectors',
      payload: { name: 'Demo', collectorType: 'Virtual', pollRateMs: 1000, settings: { sensorCount: 3 } },
    })
    expect(collector.statusCode).toBe(201)
    const { id } = collector.json()
    expect(collector.json()).toMatchObject({ name: 'Demo', active: false, running: false, hasAccessToken: false })
    const renamed = await app.inject({ method: 'PATCH', url: `/api/collectors/${id}`, payload: { name: 'Renamed' } })
    expect(renamed.json()).toMatchObject({ name: 'Renamed', settings: { sensorCount: 3 } })
    const stream = (
      await app.inject({ method: 'POST', url: '/api/connections/streams', payload: { name: 'Sink', type: 'Virtual' } })
    ).json()
    const junction = await app.inject({
      method: 'POST',
      url: '/api/junctions',
      payload: { name: 'J', collectorIds: [id], targets: [{ streamId: stream.id, sendRateMs: 500 }] },
    })
    expect(junction.statusCode).toBe(201)
    expect(junction.json()).toMatchObject({ status: 'Idle', autoStart: false, collectorIds: [id] })
    expect((await app.inject({ url: '/api/junctions' })).json()).toHaveLength(1)
    const labelled = await app.inject({
      method: 'PATCH',
      url: `/api/connections/streams/${stream.id}`,
      payload: { deviceName: 'Wall', screenId: '3' },
    })
    expect(labelled.json()).toMatchObject({ deviceName: 'Wall', screenId: '3' })
    const cleared = await app.inject({
      method: 'PATCH',
      url: `/api/connections/streams/${stream.id}`,
      payload: { deviceName: null },
    })
    expect(cleared.json()).toMatchObject({ deviceName: null, screenId: '3' })
    const tokened = await app.inject({ method: 'PATCH', url: `/api/collectors/${id}`, payload: { accessToken: 'abc' } })
    expect(tokened.json()).toMatchObject({ hasAccessToken: true })
    const untokened = await app.inject({
      method: 'PATCH',
      url: `/api/collectors/${id}`,
      payload: { accessToken: null },
    })
    expect(untokened.json()).toMatchObject({ hasAccessToken: false, externalAccessToken: false })
    expect((await app.inject({ method: 'DELETE', url: `/api/collectors/${id}` })).json()).toEqual({ success: true })
    expect((await app.inject({ url: `/api/junctions/${junction.json().id}` })).json().collectorIds).toEqual([])
    expect((await app.inject({ url: `/api/collectors/${id}` })).statusCode).toBe(404)
  })

  describe('bad input is a clear 4xx', () => {
    const unknown = '5b7e0c1e-0000-4000-8000-000000000000'
    it.each([
      ['POST', '/api/collectors', { collectorType: 'Host' }],
      ['POST', '/api/collectors', { name: 'x', collectorType: 'Toaster' }],
      ['POST', '/api/collectors', { name: 'x', collectorType: 'Host', pollRateMs: 10 }],
      ['POST', '/api/collectors', { name: 'x', collectorType: 'GenericAPI', settings: { url: 'ftp://x' } }],
      ['POST', '/api/collectors', { name: 'x', collectorType: 'Virtual', settings: { sensorCount: 0 } }],
      ['POST', '/api/collectors', { name: 'x', collectorType: 'Host', settings: { extra: 1 } }],
      ['POST', '/api/collectors', { name: 'x'.repeat(101), collectorType: 'Host' }],
      ['POST', '/api/collectors', { name: 'x', collectorType: 'Host', accessTokenPassword: 'longenough' }],
      ['PATCH', `/api/collectors/${unknown}`, {}],
      ['POST', '/api/connections/streams', { name: 's', type: 'HTTP', settings: {} }],
      ['POST', '/api/connections/streams', { name: 's', type: 'Fax' }],
      ['POST', '/api/junctions', { name: 'j', collectorIds: [unknown], targets: [] }],
      ['POST', '/api/junctions', { name: 'j', collectorIds: ['not-a-uuid'], targets: [] }],
      ['POST', '/api/junctions', { name: 'j', collectorIds: [], targets: [{ streamId: unknown, sendRateMs: 1 }] }],
    ])('%s %s %j → 400', async (method, url, payload) => {
      const { app } = await startRelay()
      const res = await app.inject({ method: method as 'POST', url, payload: JSON.stringify(payload), headers: json })
      expect(res.statusCode).toBe(400)
      expect(Value.Check(ErrorBody, res.json())).toBe(true)
      expect((await app.inject({ url: '/api/collectors' })).json()).toEqual([])
    })

    it('answers unknown ids with 404 and malformed ids with 400', async () => {
      const { app } = await startRelay()
      for (const url of [
        `/api/collectors/${unknown}`,
        `/api/connections/streams/${unknown}`,
        `/api/junctions/${unknown}`,
      ]) {
        expect((await app.inject({ url })).statusCode).toBe(404)
      }
      expect((await app.inject({ method: 'POST', url: `/api/junctions/${unknown}/start` })).statusCode).toBe(404)
      expect((await app.inject({ url: '/api/collectors/nope' })).statusCode).toBe(400)
      const malformed = await app.inject({ method: 'POST', url: '/api/collectors', payload: '{"name":', headers: json })
      expect(malformed.json().code).toBe('INVALID_REQUEST')
    })
  })
})

describe('running sources', () => {
  it('a GenericAPI collector counts new and lost sensors as the API changes', async () => {
    let document: Record<string, unknown> = { temp: 21.5, humidity: 40 }
    const api = await localServer(() => ({ status: 200, body: document }))
    const { app } = await startRelay()
    const created = await app.inject({
      method: 'POST',
      url: '/api/collectors',
      payload: { name: 'API', collectorType: 'GenericAPI', pollRateMs: 1000, settings: { url: `${api.url}/data` } },
    })
    const { id } = created.json()
    await app.inject({ method: 'POST', url: `/api/collectors/${id}/start` })
    const first = await until(
      async () => (await app.inject({ url: `/api/collectors/${id}` })).json(),
      (c) => c.lastFetchTime !== null,
    )
    expect(first).toMatchObject({
      running: true,
      lastFetchSuccessful: true,
      lastFetchTotalSensors: 2,
      lastFetchNewSensors: 2,
      lastFetchLostSensors: 0,
    })
    document = { temp: 22, pressure: 1013, wind: 3 }
    const second = await until(
      async () => (await app.inject({ url: `/api/collectors/${id}` })).json(),
      (c) => c.lastFetchTotalSensors === 3,
      4000,
    )
    expect(second).toMatchObject({ lastFetchNewSensors: 2, lastFetchLostSensors: 1 })
    const sensors = (await app.inject({ url: `/api/collectors/${id}/sensors` })).json()
    expect(sensors.find((s: { externalId: string }) => s.externalId === 'humidity')).toMatchObject({ missing: true })
    const stats = (await app.inject({ url: '/api/collectors/stats' })).json()
    expect(stats.collectors).toMatchObject({ active: 1, total: 1 })
    expect(stats.sensors).toMatchObject({ total: 3, breakdown: { lost: 1, new: 2 }, health: { severity: 'warning' } })
    await api.close()
    const failed = await until(
      async () => (await app.inject({ url: `/api/collectors/${id}` })).json(),
      (c) => c.lastFetchSuccessful === false,
      4000,
    )
    expect(failed.lastFetchErrorMessage).toEqual(expect.any(String))
    expect((await app.inject({ url: '/api/collectors/stats' })).json().collectors.health.severity).toBe('error')
  })

  it('a junction streams its sensors over HTTP; a silent stream turns warning then error on the clock', async () => {
    const clock = createTestClock(new Date())
    let accepting = true
    const receiver = await localServer(() => ({ status: accepting ? 204 : 503 }))
    const { app } = await startRelay({ clock })
    const collector = (
      await app.inject({
        method: 'POST',
        url: '/api/collectors',
        payload: { name: 'V', collectorType: 'Virtual', pollRateMs: 1000, settings: { sensorCount: 2 } },
      })
    ).json()
    const stream = (
      await app.inject({
        method: 'POST',
        url: '/api/connections/streams',
        payload: {
          name: 'Wall',
          type: 'HTTP',
          settings: { url: `${receiver.url}/in` },
          deviceName: 'Lobby',
          screenId: '7',
        },
      })
    ).json()
    const junction = (
      await app.inject({
        method: 'POST',
        url: '/api/junctions',
        payload: { name: 'Lobby', collectorIds: [collector.id], targets: [{ streamId: stream.id, sendRateMs: 200 }] },
      })
    ).json()
    const started = await app.inject({ method: 'POST', url: `/api/junctions/${junction.id}/start` })
    expect(started.json()).toMatchObject({ status: 'Running' })
    await until(
      async () => receiver.received,
      (r) => r.some((p) => (p as { sensors: unknown[] }).sensors.length === 2),
    )
    expect(receiver.received.at(-1)).toMatchObject({ junctionId: junction.id, deviceName: 'Lobby', screenId: '7' })
    const healthy = (await app.inject({ url: '/api/connections/streams/stats' })).json()
    expect(healthy).toMatchObject({
      active: 1,
      total: 1,
      health: { severity: 'success' },
      breakdown: { byType: { HTTP: 1 } },
    })

    accepting = false
    await until(
      async () => (await app.inject({ url: `/api/connections/streams/${stream.id}` })).json(),
      (s) => s.lastError !== null,
    )
    clock.advance(31_000)
    expect((await app.inject({ url: '/api/connections/streams/stats' })).json()).toMatchObject({
      slow: 1,
      health: { severity: 'warning' },
    })
    clock.advance(5 * 60_000)
    expect((await app.inject({ url: '/api/connections/streams/stats' })).json()).toMatchObject({
      inactive: 1,
      health: { severity: 'error' },
    })
    // The junction error comes once the stream is failing: after three failed sends by default.
    const titles = await until(
      async () =>
        (await app.inject({ url: '/api/notifications/history?category=system' }))
          .json()
          .notifications.map((n: { title: string }) => n.title),
      (found) => found.includes('Junction error'),
    )
    expect(titles).toEqual(expect.arrayContaining(['Junction started', 'Junction error']))
    const failing = (await app.inject({ url: `/api/connections/streams/${stream.id}` })).json()
    expect(failing.health).toMatchObject({ state: 'failing', reason: expect.stringContaining('503') })

    const stopped = await app.inject({ method: 'POST', url: `/api/junctions/${junction.id}/stop` })
    expect(stopped.json().status).toBe('Idle')
    expect((await app.inject({ url: '/api/connections/streams/stats' })).json()).toMatchObject({ active: 0 })
    expect((await app.inject({ url: '/api/collectors/stats' })).json().collectors.active).toBe(0)
  })

  it('a running collector picks up changed settings at once', async () => {
    const one = await localServer(() => ({ status: 200, body: { a: 1 } }))
    const two = await localServer(() => ({ status: 200, body: { b: 2, c: 3 } }))
    const { app } = await startRelay()
    const { id } = (
      await app.inject({
        method: 'POST',
        url: '/api/collectors',
        payload: { name: 'API', collectorType: 'GenericAPI', pollRateMs: 60_000, settings: { url: one.url } },
      })
    ).json()
    await app.inject({ method: 'POST', url: `/api/collectors/${id}/start` })
    await until(
      async () => (await app.inject({ url: `/api/collectors/${id}` })).json(),
      (c) => c.lastFetchTotalSensors === 1,
    )
    const patched = await app.inject({
      method: 'PATCH',
      url: `/api/collectors/${id}`,
      payload: { settings: { url: two.url } },
    })
    expect(patched.json()).toMatchObject({ running: true, settings: { url: two.url } })
    const after = await until(
      async () => (await app.inject({ url: `/api/collectors/${id}` })).json(),
      (c) => c.lastFetchTotalSensors === 2,
    )
    expect(after).toMatchObject({ lastFetchNewSensors: 2, lastFetchLostSensors: 1 })
  })

  it('resumes auto-start junctions after a restart', async () => {
    const folder = tempDir()
    const config = testConfig(folder.path, { RELAY_WEB_DIR: folder.path })
    const first = await createApp(config)
    const collector = (
      await first.inject({ method: 'POST', url: '/api/collectors', payload: { name: 'H', collectorType: 'Host' } })
    ).json()
    const stream = (
      await first.inject({ method: 'POST', url: '/api/connections/streams', payload: { name: 'S', type: 'Virtual' } })
    ).json()
    await first.inject({
      method: 'POST',
      url: '/api/junctions',
      payload: {
        name: 'Auto',
        autoStart: true,
        collectorIds: [collector.id],
        targets: [{ streamId: stream.id, sendRateMs: 100 }],
      },
    })
    await first.close()
    const second = await createApp(config)
    await second.ready()
    expect((await second.inject({ url: '/api/junctions' })).json()[0].status).toBe('Running')
    await until(
      async () => second.services.virtualStreams.get(stream.id),
      (payload) => payload !== undefined,
    )
    expect(second.services.virtualStreams.get(stream.id)?.sensors.length).toBeGreaterThan(0)
    await second.close()
    folder.remove()
  })

  it('a password-protected token keeps its collector locked after a restart until unlocked', async () => {
    const seen: string[] = []
    const api = await localServer(() => ({ status: 200, body: { ok: 1 } }))
    servers[0]?.on('request', (req) => seen.push(String(req.headers.authorization)))
    const folder = tempDir()
    const config = testConfig(folder.path, { RELAY_WEB_DIR: folder.path })
    const first = await createApp(config)
    const collector = (
      await first.inject({
        method: 'POST',
        url: '/api/collectors',
        payload: {
          name: 'Secured',
          collectorType: 'GenericAPI',
          pollRateMs: 1000,
          settings: { url: api.url },
          accessToken: 'secret-token-123',
          accessTokenPassword: 'correct horse',
        },
      })
    ).json()
    expect(collector).toMatchObject({ hasAccessToken: true, externalAccessToken: true, unlocked: true })
    expect(JSON.stringify(collector)).not.toContain('secret-token-123')
    await first.inject({ method: 'POST', url: `/api/collectors/${collector.id}/start` })
    await first.close()

    const second = await createApp(config)
    await second.ready()
    expect((await second.inject({ url: `/api/collectors/${collector.id}` })).json()).toMatchObject({
      unlocked: false,
      running: false,
    })
    const stats = (await second.inject({ url: '/api/collectors/stats' })).json()
    expect(stats.collectors.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ description: 'Requires password to unlock' })]),
    )
    const wrong = await second.inject({
      method: 'POST',
      url: `/api/collectors/${collector.id}/unlock`,
      payload: { password: 'wrong password' },
    })
    expect(wrong.statusCode).toBe(403)
    const right = await second.inject({
      method: 'POST',
      url: `/api/collectors/${collector.id}/unlock`,
      payload: { password: 'correct horse' },
    })
    expect(right.json()).toMatchObject({ unlocked: true, running: true })
    await until(
      async () => seen,
      (list) => list.length >= 2,
    )
    expect(seen.every((header) => header === 'Bearer secret-token-123')).toBe(true)
    await second.close()
    folder.remove()
  })
})

describe('a collector token stays with the server it was given for', () => {
  const createApi = (app: RelayApp, url: string, extra: Record<string, unknown> = {}) =>
    app.inject({
      method: 'POST',
      url: '/api/collectors',
      payload: { name: 'API', collectorType: 'GenericAPI', pollRateMs: 1000, settings: { url }, ...extra },
    })
  const patch = (app: RelayApp, id: string, payload: Record<string, unknown>) =>
    app.inject({ method: 'PATCH', url: `/api/collectors/${id}`, payload })

  it('is dropped when only the URL moves to another server, kept for a new token or the same origin', async () => {
    const a = await localServer(() => ({ status: 200, body: { a: 1 } }))
    const b = await localServer(() => ({ status: 200, body: { b: 1 } }))
    const { app } = await startRelay()
    const { id } = (await createApi(app, `${a.url}/data`, { accessToken: 'token-for-a' })).json()
    await app.inject({ method: 'POST', url: `/api/collectors/${id}/start` })
    await until(
      async () => a.requests,
      (requests) => requests.length > 0,
    )
    expect(a.requests[0]).toEqual({ path: '/data', authorization: 'Bearer token-for-a' })

    const moved = await patch(app, id, { settings: { url: `${b.url}/data` } })
    expect(moved.statusCode).toBe(200)
    expect(moved.json()).toMatchObject({
      hasAccessToken: false,
      externalAccessToken: false,
      running: true,
      settings: { url: `${b.url}/data` },
      warnings: [
        {
          code: 'ACCESS_TOKEN_REMOVED',
          message: `The saved access token was removed because the address now points to another server (${b.url}, not ${a.url}); enter the token again to keep using it.`,
        },
      ],
    })
    // Two polls of B: the one at the restart and the next one on the timer.
    await until(
      async () => b.requests,
      (requests) => requests.length >= 2,
    )
    expect(b.requests.length).toBeGreaterThanOrEqual(2)
    expect(b.requests.every((request) => request.authorization === undefined)).toBe(true)
    const stored = (await app.inject({ url: `/api/collectors/${id}` })).json()
    expect(stored).toMatchObject({ hasAccessToken: false, lastFetchSuccessful: true })
    expect(stored).not.toHaveProperty('warnings')

    const retyped = await patch(app, id, { settings: { url: `${a.url}/data` }, accessToken: 'second-token' })
    expect(retyped.json()).toMatchObject({ hasAccessToken: true, warnings: [] })
    await until(
      async () => a.requests,
      (requests) => requests.some((request) => request.authorization === 'Bearer second-token'),
    )
    const samePlace = await patch(app, id, { settings: { url: `${a.url}/v2/data` } })
    expect(samePlace.json()).toMatchObject({ hasAccessToken: true, warnings: [] })
    const onV2 = await until(
      async () => a.requests.filter((request) => request.path === '/v2/data'),
      (requests) => requests.length > 0,
    )
    expect(onV2[0]).toEqual({ path: '/v2/data', authorization: 'Bearer second-token' })
    expect(b.requests.every((request) => request.authorization === undefined)).toBe(true)
  })

  it('is dropped with its password protection, and when a type change gives or takes the address', async () => {
    const { app } = await startRelay()
    const locked = (
      await createApi(app, 'http://192.168.1.20/data', { accessToken: 'abc', accessTokenPassword: 'correct horse' })
    ).json()
    expect(locked).toMatchObject({ hasAccessToken: true, externalAccessToken: true })
    const renamed = await patch(app, locked.id, { name: 'Renamed', settings: { url: 'http://192.168.1.20:80/other' } })
    expect(renamed.json()).toMatchObject({ hasAccessToken: true, externalAccessToken: true, warnings: [] })
    const https = await patch(app, locked.id, { settings: { url: 'https://192.168.1.20/data' } })
    expect(https.json()).toMatchObject({
      hasAccessToken: false,
      externalAccessToken: false,
      unlocked: true,
      warnings: [{ code: 'ACCESS_TOKEN_REMOVED' }],
    })

    const virtual = (
      await app.inject({
        method: 'POST',
        url: '/api/collectors',
        payload: { name: 'V', collectorType: 'Virtual', settings: { sensorCount: 1 }, accessToken: 'abc' },
      })
    ).json()
    expect((await patch(app, virtual.id, { name: 'Still virtual' })).json()).toMatchObject({
      hasAccessToken: true,
      warnings: [],
    })
    const given = await patch(app, virtual.id, { collectorType: 'GenericAPI', settings: { url: 'http://10.0.0.5/' } })
    expect(given.json()).toMatchObject({ hasAccessToken: false, warnings: [{ code: 'ACCESS_TOKEN_REMOVED' }] })

    const broker = (
      await app.inject({
        method: 'POST',
        url: '/api/collectors',
        payload: {
          name: 'M',
          collectorType: 'MQTT',
          settings: { brokerUrl: 'mqtt://broker.lan', topics: ['a'] },
          accessToken: 'abc',
        },
      })
    ).json()
    const samePort = await patch(app, broker.id, { settings: { brokerUrl: 'mqtt://Broker.lan:1883', topics: ['b'] } })
    expect(samePort.json()).toMatchObject({ hasAccessToken: true, warnings: [] })
    const taken = await patch(app, broker.id, { collectorType: 'Host' })
    expect(taken.json()).toMatchObject({
      hasAccessToken: false,
      warnings: [
        {
          code: 'ACCESS_TOKEN_REMOVED',
          message:
            'The saved access token was removed because the collector no longer connects to mqtt://Broker.lan:1883.',
        },
      ],
    })

    const asked = (await createApi(app, 'http://192.168.1.20/', { accessToken: 'abc' })).json()
    const removed = await patch(app, asked.id, { settings: { url: 'http://192.168.1.30/' }, accessToken: null })
    expect(removed.json()).toMatchObject({ hasAccessToken: false, warnings: [] })
  })
})

describe('what collectors and streams may connect to', () => {
  const refused = [
    'http://169.254.169.254/latest/meta-data/',
    'http://2852039166/',
    'http://0xa9fea9fe/',
    'http://[::ffff:169.254.169.254]/',
    'http://[fe80::1]:8080/',
    'http://metadata.google.internal/computeMetadata/v1/',
  ]

  it.each(refused)('refuses a GenericAPI collector at %s on create and on update', async (url) => {
    const { app } = await startRelay()
    const created = await app.inject({
      method: 'POST',
      url: '/api/collectors',
      payload: { name: 'API', collectorType: 'GenericAPI', settings: { url } },
    })
    expect(created.statusCode).toBe(400)
    const error = created.json()
    expect(Value.Check(ErrorBody, error)).toBe(true)
    expect(error).toMatchObject({ code: 'INVALID_REQUEST', details: [{ path: 'body/settings/url' }] })
    expect(error.error).toMatch(/^\S+ is (a link-local address|the name of a cloud metadata service); /)
    expect(error.error).toContain('unless it is started with RELAY_ALLOW_LINK_LOCAL=true')
    expect((await app.inject({ url: '/api/collectors' })).json()).toEqual([])

    const { id } = (
      await app.inject({
        method: 'POST',
        url: '/api/collectors',
        payload: { name: 'API', collectorType: 'GenericAPI', settings: { url: 'http://192.168.1.20/data' } },
      })
    ).json()
    const updated = await app.inject({ method: 'PATCH', url: `/api/collectors/${id}`, payload: { settings: { url } } })
    expect(updated.statusCode).toBe(400)
    expect(updated.json()).toMatchObject({ code: 'INVALID_REQUEST', details: [{ path: 'body/settings/url' }] })
    expect((await app.inject({ url: `/api/collectors/${id}` })).json().settings).toEqual({
      url: 'http://192.168.1.20/data',
    })
  })

  const elsewhere = [
    [
      '/api/collectors',
      { name: 'M', collectorType: 'MQTT', settings: { brokerUrl: 'mqtt://0xa9fea9fe', topics: ['a'] } },
    ],
    ['/api/connections/streams', { name: 'H', type: 'HTTP', settings: { url: 'http://169.254.169.254/' } }],
    ['/api/connections/streams', { name: 'M', type: 'MQTT', settings: { brokerUrl: 'mqtts://[fe80::1]', topic: 't' } }],
  ] as const

  it('refuses link-local MQTT brokers and stream targets too, and a stream updated to one', async () => {
    const { app } = await startRelay()
    for (const [url, payload] of elsewhere) {
      const res = await app.inject({ method: 'POST', url, payload })
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toContain('RELAY_ALLOW_LINK_LOCAL=true')
    }
    const stream = (
      await app.inject({
        method: 'POST',
        url: '/api/connections/streams',
        payload: { name: 'H', type: 'HTTP', settings: { url: 'http://192.168.1.20/in' } },
      })
    ).json()
    const updated = await app.inject({
      method: 'PATCH',
      url: `/api/connections/streams/${stream.id}`,
      payload: { settings: { url: 'http://0251.0376.0251.0376/' } },
    })
    expect(updated.statusCode).toBe(400)
    expect(updated.json()).toMatchObject({ details: [{ path: 'body/settings/url' }] })
    expect(updated.json().error).toMatch(/^169\.254\.169\.254 is a link-local address; /)
  })

  it('accepts them all when the relay is started with RELAY_ALLOW_LINK_LOCAL=true', async () => {
    const { app } = await startRelay({ env: { RELAY_ALLOW_LINK_LOCAL: 'true' } })
    for (const url of refused) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/collectors',
        payload: { name: 'API', collectorType: 'GenericAPI', settings: { url } },
      })
      expect(res.statusCode).toBe(201)
    }
    for (const [url, payload] of elsewhere) {
      expect((await app.inject({ method: 'POST', url, payload })).statusCode).toBe(201)
    }
  })

  it('refuses at connect time a name that resolves to a link-local address, and the collector says why', async () => {
    const api = await localServer(() => ({ status: 200, body: { temp: 20 } }))
    const port = new URL(api.url).port
    // Names only this relay knows: one on this machine, one pointing at the metadata address.
    const reach = createReach({
      allowLinkLocal: false,
      resolve: async (hostname) => [{ address: hostname === 'lan.test' ? '127.0.0.1' : '169.254.169.254', family: 4 }],
    })
    const folder = tempDir()
    const app = await createApp(testConfig(folder.path, { RELAY_WEB_DIR: folder.path }), {
      drivers: createDrivers({ virtualSink: () => {}, webSocketHub: createWebSocketHub(), reach }),
    })
    try {
      const create = async (url: string) => {
        const res = await app.inject({
          method: 'POST',
          url: '/api/collectors',
          payload: { name: url, collectorType: 'GenericAPI', pollRateMs: 60_000, settings: { url } },
        })
        expect(res.statusCode).toBe(201)
        await app.inject({ method: 'POST', url: `/api/collectors/${res.json().id}/start` })
        return until(
          async () => (await app.inject({ url: `/api/collectors/${res.json().id}` })).json(),
          (collector) => collector.lastFetchTime !== null,
        )
      }
      expect(await create(`http://lan.test:${port}/data`)).toMatchObject({
        lastFetchSuccessful: true,
        lastFetchTotalSensors: 1,
      })
      const refusedAtConnect = await create(`http://metadata.test:${port}/data`)
      expect(refusedAtConnect).toMatchObject({
        lastFetchSuccessful: false,
        lastFetchErrorMessage:
          `Cannot reach http://metadata.test:${port}/data: metadata.test resolves to 169.254.169.254, a link-local ` +
          'address; the relay does not connect to link-local or cloud metadata addresses unless it is started with ' +
          'RELAY_ALLOW_LINK_LOCAL=true',
      })
      expect(api.requests).toHaveLength(1)
    } finally {
      await app.close()
      folder.remove()
    }
  })
})
