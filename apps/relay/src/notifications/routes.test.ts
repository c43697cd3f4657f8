import { ErrorBody, MINUTE, Notification } from '@relay/contracts'
import { createTestClock } from '@relay/testkit'
import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import { startRelay } from '../../test/app.js'

const base = '/api/notifications'
const json = { 'content-type': 'application/json' }

async function relay() {
  const clock = createTestClock()
  const { app } = await startRelay({ clock })
  return { app, clock }
}

function expectError(res: { statusCode: number; json(): unknown }, status: number, code: string) {
  expect(res.statusCode).toBe(status)
  const body = res.json()
  expect(Value.Check(ErrorBody, body)).toBe(true)
  expect(body).toMatchObject({ success: false, code })
}

describe('notification endpoints', () => {
  it('creates, reads, polls, acknowledges and lists a notification', async () => {
    const { app } = await relay()
    const created = await app.inject({
      method: 'POST',
      url: base,
      payload: { message: 'Backup uploaded', type: 'success', category: 'cloud', title: 'Backups', duration: 3000 },
    })
    expect(created.statusCode).toBe(201)
    const { notification } = created.json()
    expect(Value.Check(Notification, notification)).toBe(true)
    expect((await app.inject({ url: `${base}/${notification.id}` })).json()).toEqual(notification)

    const pending = (await app.inject({ url: `${base}/pending` })).json()
    expect(pending).toEqual({ notifications: [notification], cursor: notification.seq, hasMore: false })
    const ack = await app.inject({ method: 'POST', url: `${base}/ack`, payload: { ids: [notification.id] } })
    expect(ack.json()).toEqual({ success: true, acknowledged: 1 })
    expect((await app.inject({ url: `${base}/pending` })).json().notifications).toEqual([])
    expect((await app.inject({ url: `${base}/pending?since=${pending.cursor}` })).json().notifications).toEqual([])

    const history = (await app.inject({ url: `${base}/history?category=cloud` })).json()
    expect(history).toMatchObject({ total: 1, nextCursor: null })
    expect(history.notifications[0]).toMatchObject({ id: notification.id, isDelivered: true })
  })

  it('makes each specialised kind with its expiry', async () => {
    const { app, clock } = await relay()
    const cases = [
      { url: 'health-report-sent', payload: { deviceName: 'Pump 1' }, expiresIn: 1 * MINUTE, type: 'success' },
      {
        url: 'health-report-failed',
        payload: { deviceName: 'Pump 1', error: 'timeout' },
        expiresIn: 10 * MINUTE,
        type: 'error',
      },
      { url: 'system-update', payload: { version: '2.0.0' }, expiresIn: 24 * 60 * MINUTE, type: 'info' },
      { url: 'auth-event', payload: { event: 'login', username: 'ada' }, expiresIn: 30 * MINUTE, type: 'success' },
      { url: 'auth-event', payload: { event: 'logout' }, expiresIn: 15 * MINUTE, type: 'info' },
      { url: 'auth-event', payload: { event: 'failure', username: 'ada' }, expiresIn: null, type: 'error' },
      { url: 'auth-event', payload: { event: 'session-expired' }, expiresIn: null, type: 'warning' },
      { url: 'auth-event', payload: { event: 'cloud-auth-required' }, expiresIn: null, type: 'warning' },
    ]
    for (const { url, payload, expiresIn, type } of cases) {
      const res = await app.inject({ method: 'POST', url: `${base}/${url}`, payload })
      expect(res.statusCode, url).toBe(201)
      const { notification } = res.json()
      expect(notification.type).toBe(type)
      expect(notification.persistent).toBe(expiresIn === null)
      expect(notification.expiresAt).toBe(
        expiresIn === null ? null : new Date(clock.now().getTime() + expiresIn).toISOString(),
      )
    }
    const login = (await app.inject({ url: `${base}/history?category=auth&type=success` })).json()
    expect(login.notifications[0].message).toBe('ada signed in')
  })

  it('removes expired notifications through DELETE /expired and old ones through DELETE /cleanup', async () => {
    const { app, clock } = await relay()
    await app.inject({ method: 'POST', url: `${base}/health-report-sent`, payload: { deviceName: 'A' } })
    await app.inject({ method: 'POST', url: base, payload: { message: 'old' } })
    clock.advance(61_000)
    expect((await app.inject({ method: 'DELETE', url: `${base}/expired` })).json()).toEqual({
      success: true,
      removed: 1,
    })
    clock.advance(31 * 24 * 60 * MINUTE)
    expect((await app.inject({ method: 'DELETE', url: `${base}/cleanup` })).json()).toEqual({
      success: true,
      removed: 1,
    })
    expect((await app.inject({ method: 'DELETE', url: `${base}/cleanup?olderThanDays=1` })).json().removed).toBe(0)
  })

  it('delivers every notification once across concurrent HTTP creates and polls', async () => {
    const { app } = await relay()
    let cursor = (await app.inject({ url: `${base}/pending` })).json().cursor
    const received: string[] = []
    const creates = Array.from({ length: 100 }, (_, i) =>
      app
        .inject({ method: 'POST', url: base, payload: { message: `m${i}` } })
        .then((res) => res.json().notification.id),
    )
    const polls = (async () => {
      for (let i = 0; i < 20; i++) {
        const reply = (await app.inject({ url: `${base}/pending?since=${cursor}` })).json()
        received.push(...reply.notifications.map((n: Notification) => n.id))
        cursor = reply.cursor
      }
    })()
    const created = await Promise.all(creates)
    await polls
    for (;;) {
      const reply = (await app.inject({ url: `${base}/pending?since=${cursor}` })).json()
      received.push(...reply.notifications.map((n: Notification) => n.id))
      cursor = reply.cursor
      if (!reply.hasMore) {
        break
      }
    }
    expect(received.length).toBe(100)
    expect(new Set(received)).toEqual(new Set(created))
  })

  describe('bad input is a clear 4xx, never a 5xx, and nothing is stored', () => {
    const badCreates: [string, unknown][] = [
      ['missing message', { type: 'info' }],
      ['empty message', { message: '' }],
      ['message over 2000 chars', { message: 'x'.repeat(2001) }],
      ['title over 200 chars', { message: 'm', title: 't'.repeat(201) }],
      ['unknown type', { message: 'm', type: 'fatal' }],
      ['unknown category', { message: 'm', category: 'billing' }],
      ['message of the wrong type', { message: 42 }],
      ['persistent as a string', { message: 'm', persistent: 'yes' }],
      ['duration as a string', { message: 'm', duration: '5000' }],
      ['negative duration', { message: 'm', duration: -1 }],
      ['expiresAt that is not a date', { message: 'm', expiresAt: 'tomorrow' }],
      ['expiresAt in the past', { message: 'm', expiresAt: '2020-01-01T00:00:00Z' }],
      ['unknown field', { message: 'm', colour: 'red' }],
      ['an array body', [{ message: 'm' }]],
    ]

    it.each(badCreates)('POST / rejects %s', async (_, payload) => {
      const { app } = await relay()
      const res = await app.inject({ method: 'POST', url: base, payload: JSON.stringify(payload), headers: json })
      expectError(res, 400, 'INVALID_REQUEST')
      expect((await app.inject({ url: `${base}/history` })).json().total).toBe(0)
    })

    it('rejects malformed JSON and a wrong content type on every POST', async () => {
      const { app } = await relay()
      for (const url of ['', '/ack', '/health-report-sent', '/health-report-failed', '/system-update', '/auth-event']) {
        expectError(
          await app.inject({ method: 'POST', url: `${base}${url}`, payload: '{"message":', headers: json }),
          400,
          'INVALID_REQUEST',
        )
        expectError(
          await app.inject({
            method: 'POST',
            url: `${base}${url}`,
            payload: 'message=hi',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          }),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        )
      }
    })

    it('rejects bad bodies of the specialised endpoints', async () => {
      const { app } = await relay()
      const cases: [string, unknown][] = [
        ['health-report-sent', {}],
        ['health-report-sent', { deviceName: '' }],
        ['health-report-sent', { deviceName: 'x'.repeat(201) }],
        ['health-report-failed', { deviceName: 'A' }],
        ['health-report-failed', { deviceName: 'A', error: 5 }],
        ['system-update', { message: 'no version' }],
        ['system-update', { version: '1', message: 'x'.repeat(2001) }],
        ['auth-event', { event: 'party' }],
        ['auth-event', { event: 'login', username: 7 }],
        ['ack', { ids: [] }],
        ['ack', { ids: 'abc' }],
        ['ack', { ids: Array.from({ length: 101 }, (_, i) => `id${i}`) }],
      ]
      for (const [url, payload] of cases) {
        expectError(
          await app.inject({ method: 'POST', url: `${base}/${url}`, payload: JSON.stringify(payload), headers: json }),
          400,
          'INVALID_REQUEST',
        )
      }
      expect((await app.inject({ url: `${base}/history` })).json().total).toBe(0)
    })

    it('rejects bad query strings', async () => {
      const { app } = await relay()
      for (const url of [
        '/pending?since=-1',
        '/pending?since=abc',
        '/history?limit=0',
        '/history?limit=101',
        '/history?category=billing',
        '/history?type=fatal',
        '/history?before=x',
      ]) {
        expectError(await app.inject({ url: `${base}${url}` }), 400, 'INVALID_REQUEST')
      }
      for (const url of ['/cleanup?olderThanDays=0', '/cleanup?olderThanDays=abc']) {
        expectError(await app.inject({ method: 'DELETE', url: `${base}${url}` }), 400, 'INVALID_REQUEST')
      }
    })

    it('answers an unknown id with 404', async () => {
      const { app } = await relay()
      const res = await app.inject({ url: `${base}/5b7e0c1e-0000-4000-8000-000000000000` })
      expectError(res, 404, 'NOT_FOUND')
      expect(res.json().error).toContain('5b7e0c1e-0000-4000-8000-000000000000')
      expectError(await app.inject({ url: `${base}/${'x'.repeat(101)}` }), 400, 'INVALID_REQUEST')
    })
  })
})
