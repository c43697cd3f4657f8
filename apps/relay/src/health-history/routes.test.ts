import { createServer, type ServerResponse } from 'node:http'
import { ErrorBody, type HealthEvent } from '@relay/contracts'
import { createTestClock } from '@relay/testkit'
import { Value } from 'typebox/value'
import { afterEach, describe, expect, it } from 'vitest'
import { startRelay, testConfig } from '../../test/app.js'
import { createApp } from '../app.js'
import { closeServers, listenLocally, until } from '../sources/local-servers.js'

afterEach(closeServers)

type Step = { at: string; status: number; temp?: number }

/**
 * A local JSON API that answers the script one poll at a time, setting the relay's clock to each
 * step's time first so every outcome lands in a known minute; past the script it never answers, and
 * a poll cut short by the collector's stop is not recorded.
 */
async function scriptedApi(clock: ReturnType<typeof createTestClock>, script: Step[]) {
  const waiting: ServerResponse[] = []
  let polls = 0
  const url = await listenLocally(
    createServer((_req, res) => {
      const step = script[polls++]
      if (step === undefined) {
        waiting.push(res)
        return
      }
      clock.set(step.at)
      res.writeHead(step.status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(step.status === 200 ? { temp: step.temp } : { error: 'boom' }))
    }),
  )
  return { url, polls: () => polls }
}

const minute = (m: number, s = 0) => `2026-01-15T12:0${m}:${String(s).padStart(2, '0')}.000Z`

describe('health history over the API', () => {
  it('turns a GenericAPI collector’s polls into minute buckets, sensor values and state changes, kept across a restart', async () => {
    const clock = createTestClock(minute(0))
    const { app, dataDir, webDir } = await startRelay({ clock })
    const api = await scriptedApi(clock, [
      { at: minute(0, 5), status: 200, temp: 20 },
      { at: minute(0, 35), status: 200, temp: 24 },
      { at: minute(1, 10), status: 500 },
      { at: minute(1, 20), status: 500 },
      { at: minute(1, 40), status: 500 },
      { at: minute(3, 0), status: 200, temp: 30 },
      { at: minute(3, 10), status: 200, temp: 26 },
    ])
    const payload = { name: 'Boiler', collectorType: 'GenericAPI', pollRateMs: 1000, settings: { url: api.url } }
    const collector = (await app.inject({ method: 'POST', url: '/api/collectors', payload })).json()
    await app.inject({ method: 'POST', url: `/api/collectors/${collector.id}/start` })
    const read = async () => (await app.inject({ url: `/api/collectors/${collector.id}` })).json()
    // Failing after the three 500s, healthy again after two good polls.
    await until(read, (c) => c.health.state === 'failing', 15_000)
    expect((await until(read, (c) => c.health.state === 'healthy', 15_000)).health.state).toBe('healthy')
    await app.inject({ method: 'POST', url: `/api/collectors/${collector.id}/stop` })
    expect(api.polls()).toBeGreaterThanOrEqual(7)
    // Nothing read the history yet: what it holds after the restart was saved when the relay closed.
    await app.close()
    const restarted = await createApp(testConfig(dataDir, { RELAY_WEB_DIR: webDir }), { clock })
    try {
      const item = `collector:${collector.id}`
      const range = `from=${minute(0)}&to=${minute(5)}`
      const history = await restarted.inject({ url: `/api/health/history?item=${item}&${range}&bucket=1` })
      expect(history.statusCode).toBe(200)
      const body = history.json()
      expect(body).toMatchObject({ item, from: minute(0), to: minute(5), bucketMinutes: 1 })
      expect(body.buckets.map((b: { start: string; ok: number; failed: number }) => [b.start, b.ok, b.failed])).toEqual(
        [
          [minute(0), 2, 0],
          [minute(1), 0, 3],
          [minute(3), 2, 0],
        ],
      )
      expect(body.buckets[1].lastError).toContain('500')
      expect(body.buckets[0].lastError).toBeNull()
      expect(body.buckets[0].meanLatencyMs).toBeGreaterThanOrEqual(0)
      expect(body.sensors).toEqual([
        {
          sensor: 'temp',
          name: expect.any(String),
          unit: null,
          // Sensor values are kept per 10-minute slot.
          points: [{ start: minute(0), min: 20, max: 30, avg: 25, last: 26 }],
        },
      ])
      const coarse = (await restarted.inject({ url: `/api/health/history?item=${item}&${range}&bucket=5` })).json()
      expect(coarse.buckets).toMatchObject([{ start: minute(0), ok: 4, failed: 3 }])
      expect(coarse.sensors[0].points).toEqual([{ start: minute(0), min: 20, max: 30, avg: 25, last: 26 }])

      const events = (await restarted.inject({ url: `/api/health/events?item=${item}` })).json()
      expect(events.events.map((e: HealthEvent) => [e.from, e.to, e.at])).toEqual([
        ['healthy', 'stopped', minute(3, 10)],
        ['failing', 'healthy', minute(3, 10)],
        ['degraded', 'failing', minute(1, 40)],
        ['healthy', 'degraded', minute(1, 10)],
        ['starting', 'healthy', minute(0, 5)],
        ['stopped', 'starting', minute(0)],
      ])
      expect(events.events[2].reason).toContain('500')
      const page = (await restarted.inject({ url: `/api/health/events?item=${item}&limit=4` })).json()
      expect(page.events).toHaveLength(4)
      const rest = (
        await restarted.inject({ url: `/api/health/events?item=${item}&limit=4&before=${page.nextCursor}` })
      ).json()
      expect(rest.events.map((e: HealthEvent) => e.to)).toEqual(['healthy', 'starting'])
      expect(rest.nextCursor).toBeNull()
    } finally {
      await restarted.close()
    }
  }, 30_000)
})

describe('health history input', () => {
  const unknown = `collector:${crypto.randomUUID()}`

  it.each([
    ['no item', '/api/health/history'],
    ['a malformed item', '/api/health/history?item=collector:42'],
    ['an item of another kind', `/api/health/history?item=${unknown.replace('collector', 'sensor')}`],
    ['a malformed date', `/api/health/history?item=${unknown}&from=yesterday`],
    ['a date as a number', `/api/health/history?item=${unknown}&to=1700000000`],
    ['a zero bucket', `/api/health/history?item=${unknown}&bucket=0`],
    ['a fractional bucket', `/api/health/history?item=${unknown}&bucket=1.5`],
    ['a bucket as text', `/api/health/history?item=${unknown}&bucket=hour`],
    ['a bucket over the longest retention', `/api/health/history?item=${unknown}&bucket=200000`],
    ['an unknown parameter', `/api/health/history?item=${unknown}&sensor=temp`],
    ['a zero limit', '/api/health/events?limit=0'],
    ['a limit over 500', '/api/health/events?limit=501'],
    ['a cursor as text', '/api/health/events?before=last'],
    ['a malformed event item', '/api/health/events?item=stream:x'],
  ])('refuses %s with 400 and the error body', async (_, url) => {
    const { app } = await startRelay()
    const res = await app.inject({ url })
    expect(res.statusCode, res.body).toBe(400)
    expect(Value.Check(ErrorBody, res.json())).toBe(true)
  })

  it('refuses ranges that are backwards or need more than 1 440 buckets, and unknown items with 404', async () => {
    const { app } = await startRelay()
    const collector = (
      await app.inject({ method: 'POST', url: '/api/collectors', payload: { name: 'H', collectorType: 'Host' } })
    ).json()
    const item = `collector:${collector.id}`
    const get = (url: string) => app.inject({ url })
    const backwards = await get(`/api/health/history?item=${item}&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`)
    expect(backwards.statusCode).toBe(400)
    expect(backwards.json()).toMatchObject({ code: 'INVALID_REQUEST', error: expect.stringContaining('before') })
    const twoDays = `from=2026-01-01T00:00:00Z&to=2026-01-03T00:00:00Z`
    const oversize = await get(`/api/health/history?item=${item}&${twoDays}&bucket=1`)
    expect(oversize.statusCode).toBe(400)
    expect(oversize.json().error).toContain('2880 buckets')
    expect(Value.Check(ErrorBody, oversize.json())).toBe(true)
    expect((await get(`/api/health/history?item=${item}&${twoDays}&bucket=2`)).json()).toMatchObject({
      bucketMinutes: 2,
      buckets: [],
      sensors: [],
    })
    expect((await get(`/api/health/history?item=${item}&${twoDays}`)).json().bucketMinutes).toBe(2)

    for (const url of [
      `/api/health/history?item=${unknown}`,
      `/api/health/history?item=stream:${collector.id}`,
      `/api/health/events?item=${unknown}`,
    ]) {
      const res = await get(url)
      expect(res.statusCode, url).toBe(404)
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND' })
    }
    expect((await get(`/api/health/events?item=${item}`)).json()).toEqual({ events: [], nextCursor: null })
  })

  it('keeps the history retention with the health settings, from 1 to 90 days', async () => {
    const { app } = await startRelay()
    const url = '/api/sources/health-settings'
    expect((await app.inject({ url })).json()).toMatchObject({ historyRetentionDays: 7 })
    for (const historyRetentionDays of [0, 91, 2.5, '7']) {
      const res = await app.inject({ method: 'PUT', url, payload: { historyRetentionDays } })
      expect(res.statusCode).toBe(400)
    }
    const updated = await app.inject({ method: 'PUT', url, payload: { historyRetentionDays: 30 } })
    expect(updated.json()).toEqual({ failuresBeforeFailing: 3, successesBeforeHealthy: 2, historyRetentionDays: 30 })
  })
})
