import type { StreamDriver } from './types.js'

/** POSTs each payload as JSON; any non-2xx answer is a failed send. */
export function httpStream(settings: Record<string, unknown>): StreamDriver {
  const url = String(settings.url)
  return {
    async send(payload, signal) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(payload),
        signal,
      })
      await response.body?.cancel()
      if (!response.ok) {
        throw new Error(`${url} answered HTTP ${response.status}`)
      }
    },
    async close() {},
  }
}
