import type { Collector, Stream } from '@relay/contracts'

export type SensorValue = number | string | boolean | null

/** One sensor as a collector reported it at one fetch. */
export type Reading = { externalId: string; name: string; unit: string | null; value: SensorValue }

export type CollectorDriver = {
  /** Everything the source reports now; a sensor it no longer reports is lost. */
  fetch(signal: AbortSignal): Promise<Reading[]>
  close(): Promise<void>
}

export type CollectorDriverInput = Pick<Collector, 'id' | 'name' | 'collectorType' | 'pollRateMs'> & {
  settings: Record<string, unknown>
  accessToken: string | null
}

/** What a junction sends to each of its streams. */
export type StreamPayload = {
  junctionId: string
  junctionName: string
  deviceName: string | null
  screenId: string | null
  sentAt: string
  sensors: {
    collectorId: string
    id: string
    name: string
    unit: string | null
    value: SensorValue
    lastUpdated: string | null
  }[]
}

export type StreamDriver = {
  send(payload: StreamPayload, signal: AbortSignal): Promise<void>
  close(): Promise<void>
}

export type StreamDriverInput = Pick<Stream, 'id' | 'name' | 'type' | 'deviceName' | 'screenId'> & {
  settings: Record<string, unknown>
}
