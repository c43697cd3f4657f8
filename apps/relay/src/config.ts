import { fileURLToPath } from 'node:url'
import { MINUTE } from '@relay/contracts'
import { LogLevel, parseEnv } from '@relay/server-kit'
import { type Static, Type } from 'typebox'

const RelayEnv = Type.Object({
  RELAY_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  RELAY_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  RELAY_DATA_DIR: Type.String({ minLength: 1, default: './data/relay' }),
  /** The built web UI that the relay serves; defaults to apps/web/dist beside this app. */
  RELAY_WEB_DIR: Type.Optional(Type.String({ minLength: 1 })),
  CLOUD_URL: Type.String({ format: 'uri', pattern: '^https?://', default: 'http://127.0.0.1:8787' }),
  /** How often expired and long-delivered notifications are removed. */
  RELAY_NOTIFICATION_MAINTENANCE_MINUTES: Type.Integer({ minimum: 1, maximum: 7 * 24 * 60, default: 60 }),
  /** Allow auth mode none while listening on a non-loopback address (the API is then open to the network). */
  RELAY_ALLOW_OPEN_NETWORK: Type.Boolean({ default: false }),
  /** Let collectors and streams connect to link-local (169.254.0.0/16, fe80::/10) and cloud metadata addresses. */
  RELAY_ALLOW_LINK_LOCAL: Type.Boolean({ default: false }),
  LOG_LEVEL: Type.Enum(LogLevel, { default: 'info' }),
  LOG_PRETTY: Type.Boolean({ default: false }),
})

export type RelayConfig = Readonly<{
  port: number
  host: string
  dataDir: string
  webDir: string
  cloudUrl: string
  notificationMaintenanceEvery: number
  allowOpenNetwork: boolean
  allowLinkLocal: boolean
  logLevel: Static<typeof RelayEnv>['LOG_LEVEL']
  prettyLogs: boolean
}>

export const defaultWebDir = fileURLToPath(new URL('../../web/dist', import.meta.url))

/** Reads and checks the relay's configuration once; throws a ConfigError naming every bad key. */
export function loadConfig(env: Record<string, string | undefined>): RelayConfig {
  const parsed = parseEnv(RelayEnv, env)
  return Object.freeze({
    port: parsed.RELAY_PORT,
    host: parsed.RELAY_HOST,
    dataDir: parsed.RELAY_DATA_DIR,
    webDir: parsed.RELAY_WEB_DIR ?? defaultWebDir,
    cloudUrl: parsed.CLOUD_URL.replace(/\/$/, ''),
    notificationMaintenanceEvery: parsed.RELAY_NOTIFICATION_MAINTENANCE_MINUTES * MINUTE,
    allowOpenNetwork: parsed.RELAY_ALLOW_OPEN_NETWORK,
    allowLinkLocal: parsed.RELAY_ALLOW_LINK_LOCAL,
    logLevel: parsed.LOG_LEVEL,
    prettyLogs: parsed.LOG_PRETTY,
  })
}
