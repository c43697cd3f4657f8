import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  healthEndpoints,
  notificationEndpoints,
  type RelayHealth,
  relayBackupEndpoints,
  sourceEndpoints,
} from '@relay/contracts'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ApiError, createCall, urlOf } from './api'

type Received = { method: string; url: string; contentType: string | undefined; body: string }
type Answer = { status: number; body: string; contentType?: string; delayMs?: number }

/** A real HTTP server that records each request and answers what the test set. */
let received: Received[] = []
let answer: Answer = { status: 200, body: '{}' }
const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
  let body = ''
  for await (const chunk of request) {
    body += chunk
  }
  received.push({
    method: request.method ?? '',
    url: request.url ?? '',
    contentType: request.headers['content-type'],
    body,
  })
  const { status, body: text, contentType = 'application/json', delayMs = 0 } = answer
  setTimeout(() => response.writeHead(status, { 'content-type': contentType }).end(text), delayMs)
})
let call: ReturnType<typeof createCall>

const json = (status: number, body: unknown): Answer => ({ status, body: JSON.stringify(body) })
const health: RelayHealth = {
  status: 'degraded',
  version: '1.0.0',
  uptimeSeconds: 3,
  backendId: '6a1f2c7e-8c44-4d0e-9d8a-3f4d1c2b5a60',
  db: { ok: false, driver: 'sqlite', latencyMs: 0, error: 'disk I/O error' },
}

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  call = createCall(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
beforeEach(() => {
  received = []
  answer = json(200, { success: true })
})

describe('call', () => {
  it('fills url parameters encoded, so an id cannot reach another path', async () => {
    await call(sourceEndpoints.deleteCollector, { params: { id: '../junctions/a b?x#y' } })

    expect(received).toEqual([
      { method: 'DELETE', url: '/api/collectors/..%2Fjunctions%2Fa%20b%3Fx%23y', contentType: undefined, body: '' },
    ])
  })

  it('appends only the query values that are defined', async () => {
    answer = json(200, { notifications: [], nextCursor: null, total: 0 })
    await call(notificationEndpoints.history, { query: { limit: 10, category: 'auth', before: undefined } })
    await call(relayBackupEndpoints.list, { query: { allRelays: true } })
    await call(notificationEndpoints.pending, { query: { since: undefined } })

    expect(received.map((request) => request.url)).toEqual([
      '/api/notifications/history?limit=10&category=auth',
      '/api/cloud-backups/list?allRelays=true',
      '/api/notifications/pending',
    ])
  })

  it('sends a body as JSON, and no content type at all when the endpoint takes none', async () => {
    answer = json(201, { id: 'stream' })
    const reply = await call(sourceEndpoints.createStream, { body: { name: 'Screen', type: 'Virtual' } })
    await call(sourceEndpoints.startJunction, { params: { id: 'j1' } })

    expect(reply).toEqual({ id: 'stream' })
    expect(received).toEqual([
      {
        method: 'POST',
        url: '/api/connections/streams',
        contentType: 'application/json',
        body: '{"name":"Screen","type":"Virtual"}',
      },
      { method: 'POST', url: '/api/junctions/j1/start', contentType: undefined, body: '' },
    ])
  })

  it('throws an error body as an ApiError with its code, status and details', async () => {
    const details = [{ path: 'body/name', message: 'must NOT have fewer than 1 characters' }]
    answer = json(400, { success: false, error: 'Invalid body', code: 'INVALID_REQUEST', details })

    const error = await call(sourceEndpoints.createCollector, { body: { name: '', collectorType: 'Host' } }).catch(
      (thrown: unknown) => thrown,
    )

    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ code: 'INVALID_REQUEST', status: 400, message: 'Invalid body', details })
  })

  it('resolves a data status with its body: health answers 503 with the full report', async () => {
    answer = json(503, health)

    await expect(call(healthEndpoints.relay)).resolves.toEqual(health)
    // The same status from an endpoint whose contract says nothing of it is a failure.
    await expect(call(sourceEndpoints.listCollectors)).rejects.toMatchObject({ code: 'UNAVAILABLE', status: 503 })
  })

  it('names who answered when the reply is not the relay’s JSON', async () => {
    answer = { status: 502, body: '<html>Bad gateway</html>', contentType: 'text/html' }
    await expect(call(sourceEndpoints.listStreams)).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      status: 502,
      message: 'HTTP 502 Bad Gateway',
    })

    answer = { status: 200, body: 'not json', contentType: 'text/plain' }
    await expect(call(sourceEndpoints.listStreams)).rejects.toMatchObject({ code: 'INTERNAL', status: 200 })
  })

  it('rethrows an abort as it is, not as an ApiError', async () => {
    answer = { ...json(200, []), delayMs: 1000 }
    const controller = new AbortController()
    const arrived = new Promise((resolve) => server.once('request', resolve))
    const pending = call(sourceEndpoints.listJunctions, { signal: controller.signal })
    // Aborted mid-request: the server has it, and its reply is still a second away.
    await arrived
    controller.abort()

    const error = await pending.catch((thrown: unknown) => thrown)
    expect(error).not.toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ name: 'AbortError' })
  })

  it('reports a relay it cannot reach as UNAVAILABLE with status 0', async () => {
    const unreachable = createCall('http://127.0.0.1:9')

    await expect(unreachable(sourceEndpoints.listCollectors)).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      status: 0,
    })
  })
})

describe('urlOf', () => {
  it('builds the links the UI navigates to, without fetching', () => {
    expect(urlOf(relayBackupEndpoints.download, { params: { backupId: 'a/b' } })).toBe(
      '/api/cloud-backups/a%2Fb/download',
    )
  })
})
