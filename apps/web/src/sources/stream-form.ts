import { type CreateStreamBody, type Stream, type StreamType, sourceEndpoints, streamTypes } from '@relay/contracts'
import { urlOf } from '../api'

export { streamTypes }

export type StreamDraft = {
  name: string
  type: StreamType
  deviceName: string
  screenId: string
  url: string
  brokerUrl: string
  topic: string
  path: string
  baudRate: string
}

export const streamFields = [
  'name',
  'type',
  'deviceName',
  'screenId',
  'settings.url',
  'settings.brokerUrl',
  'settings.topic',
  'settings.path',
  'settings.baudRate',
] as const

export function toStreamDraft(stream?: Stream): StreamDraft {
  const settings = stream?.settings ?? {}
  const text = (value: unknown) => (value === undefined || value === null ? '' : String(value))
  return {
    name: stream?.name ?? '',
    type: stream?.type ?? 'HTTP',
    deviceName: stream?.deviceName ?? '',
    screenId: stream?.screenId ?? '',
    url: text(settings.url),
    brokerUrl: text(settings.brokerUrl),
    topic: text(settings.topic),
    path: text(settings.path),
    baudRate: text(settings.baudRate),
  }
}

export type StreamCheck = { ok: true; body: CreateStreamBody } | { ok: false; errors: Record<string, string> }

/** The request body for a draft; empty optional fields are left out. */
export function toStreamBody(draft: StreamDraft): StreamCheck {
  const body: CreateStreamBody = { name: draft.name.trim(), type: draft.type }
  if (draft.deviceName.trim()) {
    body.deviceName = draft.deviceName.trim()
  }
  if (draft.screenId.trim()) {
    body.screenId = draft.screenId.trim()
  }
  switch (draft.type) {
    case 'HTTP':
      body.settings = { url: draft.url.trim() }
      break
    case 'MQTT':
      body.settings = { brokerUrl: draft.brokerUrl.trim(), topic: draft.topic.trim() }
      break
    case 'COM': {
      body.settings = { path: draft.path.trim() }
      const baudRate = draft.baudRate.trim()
      if (baudRate) {
        if (!/^\d+$/.test(baudRate)) {
          return { ok: false, errors: { 'settings.baudRate': 'Enter a whole number' } }
        }
        body.settings.baudRate = Number(baudRate)
      }
      break
    }
    case 'WebSocket':
    case 'Virtual':
      body.settings = {}
      break
    default: {
      const unknownType: never = draft.type
      throw new Error(`Unknown stream type ${String(unknownType)}`)
    }
  }
  return { ok: true, body }
}

/** Where WebSocket clients subscribe to a stream, on the host that serves this page. */
export function webSocketUrl(
  streamId: string,
  location: Pick<Location, 'protocol' | 'host'> = window.location,
): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws'
  return `${scheme}://${location.host}${urlOf(sourceEndpoints.getStream, { params: { id: streamId } })}/ws`
}
