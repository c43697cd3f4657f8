import { AppError } from '@relay/contracts'
import type { DriverFactories } from '../runtime.js'
import { genericApiCollector } from './generic-api.js'
import { hostCollector } from './host.js'
import { httpStream } from './http-stream.js'
import type { StreamPayload } from './types.js'
import { eventEngineCollector, virtualCollector, virtualStream } from './virtual.js'

/** The built-in drivers; `virtualSink` receives what Virtual streams send. */
export function createDrivers(virtualSink: (streamId: string, payload: StreamPayload) => void): DriverFactories {
  return {
    collector(input) {
      switch (input.collectorType) {
        case 'Host':
          return hostCollector()
        case 'GenericAPI':
          return genericApiCollector(input.settings, input.accessToken)
        case 'Virtual':
          return virtualCollector(input.settings)
        case 'EventEngine':
          return eventEngineCollector()
        case 'MQTT':
          throw new AppError('CONFLICT', 'MQTT collectors are not available in this build')
        default:
          return unreachable(input.collectorType)
      }
    },
    stream(input) {
      switch (input.type) {
        case 'HTTP':
          return httpStream(input.settings)
        case 'Virtual':
          return virtualStream((payload) => virtualSink(input.id, payload))
        case 'MQTT':
        case 'WebSocket':
        case 'COM':
          throw new AppError('CONFLICT', `${input.type} streams are not available in this build`)
        default:
          return unreachable(input.type)
      }
    },
  }
}

function unreachable(value: never): never {
  throw new Error(`unknown driver ${String(value)}`)
}
