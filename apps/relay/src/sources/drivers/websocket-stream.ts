import type { WebSocketHub } from '../websocket-hub.js'
import type { StreamDriver } from './types.js'

/** Broadcasts each payload to the WebSocket clients subscribed to the stream; none listening is not a failure. */
export function webSocketStream(hub: WebSocketHub, streamId: string): StreamDriver {
  return {
    async send(payload) {
      hub.publish(streamId, payload)
    },
    async close() {},
  }
}
