import fastifyWebsocket, { type WebSocket } from '@fastify/websocket'
import { AppError, IdParams, type Stream } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { StreamPayload } from './drivers/types.js'

/** A subscriber this far behind skips payloads until it catches up: each payload replaces the last. */
const maxBufferedBytes = 1024 * 1024

/** Subscribers only listen; anything larger they send closes their connection. */
const maxIncomingBytes = 4096

export const streamSocketRoute = {
  method: 'GET',
  url: '/api/connections/streams/:id/ws',
  schema: { params: IdParams },
} as const

/**
 * Fans the payloads of WebSocket streams out to the clients subscribed to each stream, and keeps
 * the latest payload of each so a client that connects later starts with it.
 */
export function createWebSocketHub() {
  const latest = new Map<string, string>()
  const subscribers = new Map<string, Set<WebSocket>>()

  const deliver = (socket: WebSocket, message: string) => {
    if (socket.readyState === socket.OPEN && socket.bufferedAmount < maxBufferedBytes) {
      socket.send(message)
    }
  }

  return {
    /** Sends to every subscriber of the stream; with none, the payload is only kept as the latest. */
    publish(streamId: string, payload: StreamPayload) {
      const message = JSON.stringify(payload)
      latest.set(streamId, message)
      for (const socket of subscribers.get(streamId) ?? []) {
        deliver(socket, message)
      }
    },

    subscribe(streamId: string, socket: WebSocket) {
      let sockets = subscribers.get(streamId)
      if (!sockets) {
        sockets = new Set()
        subscribers.set(streamId, sockets)
      }
      sockets.add(socket)
      socket.once('close', () => {
        sockets.delete(socket)
        if (sockets.size === 0 && subscribers.get(streamId) === sockets) {
          subscribers.delete(streamId)
        }
      })
      const last = latest.get(streamId)
      if (last !== undefined) {
        deliver(socket, last)
      }
    },
  }
}

export type WebSocketHub = ReturnType<typeof createWebSocketHub>

/**
 * WebSocket upgrades for the whole server. Call it on the root instance before registering any
 * route: @fastify/websocket then answers an upgrade request to every other URL and closes its
 * socket, where registered inside one plugin it would leave such sockets open (and `close()` waiting).
 */
export async function webSocketSupport(app: HttpServer) {
  await app.register(fastifyWebsocket, { options: { maxPayload: maxIncomingBytes } })
}

export type WebSocketHubRoutesOptions = {
  hub: WebSocketHub
  /** The stream behind an id; throws NOT_FOUND for an unknown one (as `SourcesService.getStream`). */
  getStream: (id: string) => Promise<Pick<Stream, 'type'>>
}

/**
 * `GET /api/connections/streams/:id/ws`: a WebSocket client subscribes to one WebSocket stream and
 * receives each payload as a JSON text message. An unknown stream is refused before the upgrade.
 */
export async function webSocketHubRoutes(app: HttpServer, { hub, getStream }: WebSocketHubRoutesOptions) {
  if (!app.hasDecorator('websocketServer')) {
    throw new Error('webSocketHubRoutes needs webSocketSupport(app) on the root instance first')
  }
  app.route({
    ...streamSocketRoute,
    preHandler: async (request) => {
      const stream = await getStream(request.params.id)
      if (stream.type !== 'WebSocket') {
        throw new AppError('NOT_FOUND', `Stream ${request.params.id} is not a WebSocket stream`)
      }
    },
    handler: async () => {
      throw new AppError('INVALID_REQUEST', 'This address accepts WebSocket connections only')
    },
    wsHandler: (socket, request) => {
      hub.subscribe(request.params.id, socket)
    },
  })
}
