import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { AppError, type ErrorBody, type Stream } from '@relay/contracts'
import { createHttpServer, type HttpServer } from '@relay/server-kit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { createWebSocketHub, type WebSocketHub, webSocketHubRoutes, webSocketSupport } from '../websocket-hub.js'
import type { StreamPayload } from './types.js'
import { webSocketStream } from './websocket-stream.js'

const ids = { ws1: randomUUID(), ws2: randomUUID(), http: randomUUID(), unknown: randomUUID() }
const streams: Record<string, Pick<Stream, 'type'>> = {
  [ids.ws1]: { type: 'WebSocket' },
  [ids.ws2]: { type: 'WebSocket' },
  [ids.http]: { type: 'HTTP' },
}

const within = () => AbortSignal.timeout(5000)

const payloadAt = (second: number): StreamPayload => ({
  junctionId: 'junction-1',
  junctionName: 'Plant',
  deviceName: null,
  screenId: null,
  sentAt: `2025-01-01T00:00:0${second}.000Z`,
  sensors: [{ collectorId: 'c1', id: 'temp', name: 'Temperature', unit: '°C', value: 20 + second, lastUpdated: null }],
})

describe('WebSocket stream', () => {
  let app: HttpServer
  let hub: WebSocketHub
  let baseUrl: string
  const clients: WebSocket[] = []

  beforeAll(async () => {
    hub = createWebSocketHub()
    app = createHttpServer({ logger: { level: 'silent', pretty: false } })
    await webSocketSupport(app)
    app.get('/api/other', async () => ({ other: true }))
    await app.register(webSocketHubRoutes, {
      hub,
      getStream: async (id) => {
        const stream = streams[id]
        if (!stream) {
          throw new AppError('NOT_FOUND', `Stream ${id} not found`)
        }
        return stream
      },
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    baseUrl = `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  })

  afterAll(() => app.close())

  afterEach(() => {
    for (const client of clients.splice(0)) {
      client.terminate()
    }
  })

  /** A connected client of one stream, and the payloads it has received so far. */
  async function subscribe(streamId: string) {
    const client = new WebSocket(`${baseUrl}/api/connections/streams/${streamId}/ws`)
    clients.push(client)
    const received: unknown[] = []
    client.on('message', (data) => received.push(JSON.parse(String(data))))
    await new Promise((resolve, reject) => {
      client.once('open', resolve)
      client.once('error', reject)
    })
    return received
  }

  /** The answer to an upgrade the server refuses. */
  async function refusal(streamId: string): Promise<{ status: number; body: ErrorBody }> {
    return upgradeAnswer(`/api/connections/streams/${streamId}/ws`) as Promise<{ status: number; body: ErrorBody }>
  }

  async function upgradeAnswer(url: string): Promise<{ status: number; body: unknown }> {
    const client = new WebSocket(`${baseUrl}${url}`)
    clients.push(client)
    // Closing a client whose handshake failed reports that as an error; it is expected here.
    client.on('error', () => {})
    return new Promise((resolve, reject) => {
      client.once('open', () => reject(new Error('the upgrade was accepted')))
      client.once('unexpected-response', (_request, response) => {
        let text = ''
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8')
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }))
      })
    })
  }

  it('sends each payload to every subscriber of its stream', async () => {
    const first = await subscribe(ids.ws1)
    const second = await subscribe(ids.ws1)
    const other = await subscribe(ids.ws2)
    const stream = webSocketStream(hub, ids.ws1)

    await stream.send(payloadAt(1), within())
    await stream.send(payloadAt(2), within())

    await expect.poll(() => first).toEqual([payloadAt(1), payloadAt(2)])
    await expect.poll(() => second).toEqual([payloadAt(1), payloadAt(2)])
    expect(other).toEqual([])
  })

  it('succeeds without subscribers and greets a later subscriber with the latest payload', async () => {
    const stream = webSocketStream(hub, ids.ws2)

    await stream.send(payloadAt(3), within())
    await stream.send(payloadAt(4), within())
    const late = await subscribe(ids.ws2)
    await expect.poll(() => late).toEqual([payloadAt(4)])

    await stream.send(payloadAt(5), within())
    await expect.poll(() => late).toEqual([payloadAt(4), payloadAt(5)])
  })

  it('keeps sending to the others when one subscriber disconnects', async () => {
    const staying = await subscribe(ids.ws1)
    await subscribe(ids.ws1)
    const leaving = clients.at(-1)
    await new Promise((resolve) => {
      leaving?.once('close', resolve)
      leaving?.close()
    })
    const stream = webSocketStream(hub, ids.ws1)

    await stream.send(payloadAt(6), within())

    await expect.poll(() => staying.at(-1)).toEqual(payloadAt(6))
  })

  it('refuses an unknown stream before the upgrade with a 404 error body', async () => {
    expect(await refusal(ids.unknown)).toEqual({
      status: 404,
      body: { success: false, code: 'NOT_FOUND', error: `Stream ${ids.unknown} not found` },
    })
  })

  it('refuses a stream of another type with a 404 error body', async () => {
    expect(await refusal(ids.http)).toEqual({
      status: 404,
      body: { success: false, code: 'NOT_FOUND', error: `Stream ${ids.http} is not a WebSocket stream` },
    })
  })

  it('refuses a malformed stream id with a 400 error body', async () => {
    expect(await refusal('nope')).toMatchObject({ status: 400, body: { success: false, code: 'INVALID_REQUEST' } })
  })

  it('closes a WebSocket upgrade to an ordinary route, which still answers over HTTP', async () => {
    const client = new WebSocket(`${baseUrl}/api/other`)
    clients.push(client)
    const closed = new Promise((resolve) => client.once('close', resolve))
    client.on('error', () => {})

    await closed
    expect((await app.inject({ method: 'GET', url: '/api/other' })).json()).toEqual({ other: true })
  })

  it('answers a plain HTTP request with 400', async () => {
    const response = await app.inject({ method: 'GET', url: `/api/connections/streams/${ids.ws1}/ws` })

    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ success: false, code: 'INVALID_REQUEST' })
  })
})
