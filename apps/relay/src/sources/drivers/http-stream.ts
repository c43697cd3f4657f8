import type { Reach } from '../reach.js'
import { httpRequest } from './http-request.js'
import type { StreamDriver } from './types.js'

/** The receiver's answer is not used, only read to its end so the connection can be reused. */
const maxAnswerBytes = 1024 * 1024

/** POSTs each payload as JSON; any non-2xx answer is a failed send. */
export function httpStream(settings: Record<string, unknown>, reach: Reach): StreamDriver {
  const url = String(settings.url)
  return {
    async send(payload, signal) {
      const response = await httpRequest(reach, url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(payload),
        signal,
        maxBytes: maxAnswerBytes,
      })
      if (response.status < 200 || response.status > 299) {
        throw new Error(`${url} answered HTTP ${response.status}`)
      }
    },
    async close() {},
  }
}
