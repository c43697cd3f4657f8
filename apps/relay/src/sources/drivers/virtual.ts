import type { CollectorDriver, StreamDriver, StreamPayload } from './types.js'

/** Synthetic values for demos: each sensor wanders within [min, max]. */
export function virtualCollector(settings: Record<string, unknown>): CollectorDriver {
  const count = Number(settings.sensorCount ?? 1)
  const min = Number(settings.min ?? 0)
  const max = Number(settings.max ?? 100)
  const values = Array.from({ length: count }, () => min + Math.random() * (max - min))
  return {
    async fetch() {
      return values.map((value, index) => {
        const step = (Math.random() - 0.5) * (max - min) * 0.1
        values[index] = Math.min(max, Math.max(min, value + step))
        return {
          externalId: `virtual.${index + 1}`,
          name: `Virtual ${index + 1}`,
          unit: null,
          value: Math.round((values[index] ?? 0) * 100) / 100,
        }
      })
    },
    async close() {},
  }
}

/** Internal collector of the event engine: it reports nothing and every statistic leaves it out. */
export function eventEngineCollector(): CollectorDriver {
  return { fetch: async () => [], close: async () => {} }
}

/** An in-process sink that keeps what it was sent, for demos and for watching a junction work. */
export function virtualStream(onPayload: (payload: StreamPayload) => void): StreamDriver {
  return {
    async send(payload) {
      onPayload(payload)
    },
    async close() {},
  }
}
