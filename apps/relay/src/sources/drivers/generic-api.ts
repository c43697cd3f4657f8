import type { Reach } from '../reach.js'
import { httpRequest } from './http-request.js'
import type { CollectorDriver, Reading, SensorValue } from './types.js'

type SensorSpec = { path: string; name?: string; unit?: string }

const maxDiscovered = 1000
const maxDocumentBytes = 10 * 1024 * 1024

/**
 * Polls a JSON URL. Listed sensors are read by path; without a list, every scalar in the document
 * becomes a sensor named by its path. A listed path that is absent is simply not reported (lost).
 */
export function genericApiCollector(
  settings: Record<string, unknown>,
  accessToken: string | null,
  reach: Reach,
): CollectorDriver {
  const url = String(settings.url)
  const specs = Array.isArray(settings.sensors) ? (settings.sensors as SensorSpec[]) : []
  return {
    async fetch(signal) {
      const headers: Record<string, string> = { accept: 'application/json' }
      if (accessToken) {
        headers.authorization = `Bearer ${accessToken}`
      }
      const response = await httpRequest(reach, url, { method: 'GET', headers, signal, maxBytes: maxDocumentBytes })
      if (response.status < 200 || response.status > 299) {
        throw new Error(`${url} answered HTTP ${response.status}`)
      }
      let document: unknown
      try {
        document = JSON.parse(response.body.toString('utf8'))
      } catch {
        throw new Error(`${url} did not answer with JSON`)
      }
      if (specs.length === 0) {
        return discover(document)
      }
      const readings: Reading[] = []
      for (const spec of specs) {
        const value = readPath(document, spec.path)
        if (value !== undefined) {
          readings.push({ externalId: spec.path, name: spec.name ?? spec.path, unit: spec.unit ?? null, value })
        }
      }
      return readings
    },
    async close() {},
  }
}

/** The scalar at a dot-separated path (`data.0.temp`), or undefined when absent or not a scalar. */
export function readPath(document: unknown, path: string): SensorValue | undefined {
  let node: unknown = document
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) {
      return undefined
    }
    node = (node as Record<string, unknown>)[key]
  }
  return isScalar(node) ? node : undefined
}

function discover(document: unknown): Reading[] {
  const readings: Reading[] = []
  const walk = (node: unknown, path: string) => {
    if (readings.length >= maxDiscovered) {
      return
    }
    if (isScalar(node)) {
      if (path) {
        readings.push({ externalId: path, name: path, unit: null, value: node })
      }
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        walk(child, path ? `${path}.${key}` : key)
      }
    }
  }
  walk(document, '')
  return readings
}

function isScalar(value: unknown): value is SensorValue {
  return value === null || ['number', 'string', 'boolean'].includes(typeof value)
}
