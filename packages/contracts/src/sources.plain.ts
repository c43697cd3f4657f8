import { endpoint } from './endpoint.js'
import { HOUR, SECOND } from './time.js'

export const sourceLimits = {
  pollRate: { min: SECOND, max: HOUR, default: 5 * SECOND },
  sendRate: { min: 100, max: HOUR, default: SECOND },
  sensorsPerCollector: 1000,
} as const

export const collectorWarningCodes = ['ACCESS_TOKEN_REMOVED'] as const

export const junctionStatuses = ['Idle', 'Running'] as const
export type JunctionStatus = (typeof junctionStatuses)[number]

// Health ---------------------------------------------------------------------------------------

/**
 * The health of a collector, sensor, stream or junction. `degraded`: working, but slow or partial
 * (sensors lost, a failed poll short of the failing threshold); `failing`: the failure threshold
 * of consecutive failures was reached, and it stays failing until the recovery threshold of
 * consecutive successes is.
 */
export const healthStates = ['stopped', 'starting', 'healthy', 'degraded', 'failing'] as const
export type HealthState = (typeof healthStates)[number]

/** The hysteresis settings: inclusive ranges and defaults. */
export const sourceHealthLimits = {
  failuresBeforeFailing: { min: 1, max: 20, default: 3 },
  successesBeforeHealthy: { min: 1, max: 20, default: 2 },
  /** Days the health history (`/api/health/history`, `/api/health/events`) is kept. */
  historyRetentionDays: { min: 1, max: 90, default: 7 },
} as const

// Addresses ------------------------------------------------------------------------------------

/** The WHATWG URL parser, global in browsers and Node alike; contracts are typed for neither environment. */
declare const URL: new (url: string) => { hostname: string; protocol: string; port: string }

/** The settings of collectors and streams that hold an address the relay connects to. */
export const addressSettings = ['url', 'brokerUrl'] as const

/** The address a collector connects to, which its access token is bound to; undefined for types without one. */
export function collectorAddress(settings: Record<string, unknown>): string | undefined {
  const address = addressSettings.map((key) => settings[key]).find((value) => typeof value === 'string')
  return address as string | undefined
}

/**
 * The host a URL connects to, as the network sees it: lower case, without brackets or a trailing
 * dot, IPv4 in dotted form. Non-HTTP schemes (mqtt:) keep the host as typed, so it is parsed again
 * as an HTTP host, turning `2852039166` or `0xa9fea9fe` into 169.254.169.254 as a system resolver
 * would. Undefined when the URL does not parse.
 */
export function urlHost(url: string): string | undefined {
  let hostname: string
  try {
    hostname = new URL(url).hostname
  } catch {
    return undefined
  }
  let host = hostname.toLowerCase()
  try {
    host = new URL(`http://${hostname}`).hostname
  } catch {
    // Not a valid HTTP host: kept as typed, and the connection fails on its own.
  }
  return host.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '')
}

const defaultPorts: Record<string, string> = { 'http:': '80', 'https:': '443', 'mqtt:': '1883', 'mqtts:': '8883' }

/**
 * Scheme, host and port of a URL with default ports filled in, so `http://a/x` and `http://A:80/y`
 * are equal. Unlike `URL.origin` it also works for mqtt: URLs. Undefined when it does not parse.
 */
export function urlOrigin(url: string): string | undefined {
  let parsed: { protocol: string; port: string }
  try {
    parsed = new URL(url)
  } catch {
    return undefined
  }
  const host = urlHost(url) ?? ''
  const shown = host.includes(':') ? `[${host}]` : host
  return `${parsed.protocol}//${shown}:${parsed.port || defaultPorts[parsed.protocol] || ''}`
}

/**
 * Whether a saved access token may stay when a collector's address changes from `from` to `to`:
 * only while both point to the same origin (or neither has an address), so it never reaches a
 * server it was not given for.
 */
export function keepsAccessToken(from: string | undefined, to: string | undefined): boolean {
  const origin = (address: string | undefined) => (address === undefined ? 'none' : (urlOrigin(address) ?? address))
  return origin(from) === origin(to)
}

// Endpoints ------------------------------------------------------------------------------------

export const sourceUrls = {
  listCollectors: endpoint('GET', '/api/collectors'),
  createCollector: endpoint('POST', '/api/collectors'),
  getCollector: endpoint('GET', '/api/collectors/:id'),
  updateCollector: endpoint('PATCH', '/api/collectors/:id'),
  deleteCollector: endpoint('DELETE', '/api/collectors/:id'),
  startCollector: endpoint('POST', '/api/collectors/:id/start'),
  stopCollector: endpoint('POST', '/api/collectors/:id/stop'),
  unlockCollector: endpoint('POST', '/api/collectors/:id/unlock'),
  listSensors: endpoint('GET', '/api/collectors/:id/sensors'),
  listStreams: endpoint('GET', '/api/connections/streams'),
  createStream: endpoint('POST', '/api/connections/streams'),
  getStream: endpoint('GET', '/api/connections/streams/:id'),
  updateStream: endpoint('PATCH', '/api/connections/streams/:id'),
  deleteStream: endpoint('DELETE', '/api/connections/streams/:id'),
  listJunctions: endpoint('GET', '/api/junctions'),
  createJunction: endpoint('POST', '/api/junctions'),
  getJunction: endpoint('GET', '/api/junctions/:id'),
  updateJunction: endpoint('PATCH', '/api/junctions/:id'),
  deleteJunction: endpoint('DELETE', '/api/junctions/:id'),
  startJunction: endpoint('POST', '/api/junctions/:id/start'),
  stopJunction: endpoint('POST', '/api/junctions/:id/stop'),
  getHealthSettings: endpoint('GET', '/api/sources/health-settings'),
  updateHealthSettings: endpoint('PUT', '/api/sources/health-settings'),
}
