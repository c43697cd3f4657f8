import type { Reach } from '../reach.js'
import type { DriverFactories } from '../runtime.js'
import type { WebSocketHub } from '../websocket-hub.js'
import { comStream } from './com-stream.js'
import { genericApiCollector } from './generic-api.js'
import { hostCollector } from './host.js'
import { httpStream } from './http-stream.js'
import { mqttCollector, mqttStream } from './mqtt.js'
import type { StreamPayload } from './types.js'
import { eventEngineCollector, virtualCollector, virtualStream } from './virtual.js'
import { webSocketStream } from './websocket-stream.js'

export type DriverOptions = {
  /** Receives what Virtual streams send. */
  virtualSink: (streamId: string, payload: StreamPayload) => void
  /** Serves what WebSocket streams send to their subscribers. */
  webSocketHub: WebSocketHub
  /** What collectors and streams may connect to. */
  reach: Reach
}

/** The built-in drivers. */
export function createDrivers({ virtualSink, webSocketHub, reach }: DriverOptions): DriverFactories {
  return {
    collector(input) {
      switch (input.collectorType) {
        case 'Host':
          return hostCollector()
        case 'GenericAPI':
          return genericApiCollector(input.settings, input.accessToken, reach)
        case 'MQTT':
          return mqttCollector(input.settings, input.pollRateMs, reach)
        case 'Virtual':
          return virtualCollector(input.settings)
        case 'EventEngine':
          return eventEngineCollector()
        default:
          return unreachable(input.collectorType)
      }
    },
    stream(input) {
      switch (input.type) {
        case 'HTTP':
          return httpStream(input.settings, reach)
        case 'MQTT':
          return mqttStream(input.settings, reach)
        case 'WebSocket':
          return webSocketStream(webSocketHub, input.id)
        case 'COM':
          return comStream(input.settings)
        case 'Virtual':
          return virtualStream((payload) => virtualSink(input.id, payload))
        default:
          return unreachable(input.type)
      }
    },
  }
}

function unreachable(value: never): never {
  throw new Error(`unknown driver ${String(value)}`)
}
