import { ConfigError, LogLevel, parseEnv } from '@relay/server-kit'
import { type Static, Type } from 'typebox'
import { type BillingConfig, billingConfig } from './payments/config.js'

const CloudEnv = Type.Object({
  CLOUD_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8787 }),
  CLOUD_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  /** The address relays and browsers use to reach this cloud; defaults to http://host:port. */
  CLOUD_PUBLIC_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  CLOUD_DATA_DIR: Type.String({ minLength: 1, default: './data/cloud' }),
  /** PostgreSQL connection string; without it the cloud runs on embedded PGlite in the data folder. */
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  /** Redis for caches and rate limits shared by several instances; in memory per instance without it. */
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** The signing secret of the payment provider's webhook endpoint (`whsec_…`); webhooks are refused without it. */
  STRIPE_WEBHOOK_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  /** A Stripe secret (`sk_…`) or restricted (`rk_…`) key; with STRIPE_PRICE_ID it turns on Checkout and the portal. */
  STRIPE_SECRET_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** The recurring Stripe price a Pro subscription is sold at (`price_…`). */
  STRIPE_PRICE_ID: Type.Optional(Type.String({ pattern: '^price_\\w{1,200}$' })),
  /** Where the Stripe SDK sends its requests instead of https://api.stripe.com (a self-hosted stand-in). */
  STRIPE_API_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  /** Where mail goes (smtp://user:pass@host:587); without it each message is written under `<data dir>/outbox/`. */
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://[^\\s]+$' })),
  MAIL_FROM: Type.String({ minLength: 3, maxLength: 255, default: 'Relay Cloud <no-reply@relay.local>' }),
  /** Creates a demo account with a gifted license at first start and prints its password once. */
  CLOUD_DEMO_ACCOUNT: Type.Boolean({ default: false }),
  LOG_LEVEL: Type.Enum(LogLevel, { default: 'info' }),
  LOG_PRETTY: Type.Boolean({ default: false }),
  /** An S3-compatible object store for backups; without it the cloud serves its own under `/s3`. */
  S3_ENDPOINT: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://' })),
  S3_BUCKET: Type.String({
    minLength: 3,
    maxLength: 63,
    pattern: '^[a-z0-9][a-z0-9.-]*[a-z0-9]$',
    default: 'relay-backups',
  }),
  S3_REGION: Type.String({ minLength: 1, default: 'us-east-1' }),
  /** Required with S3_ENDPOINT; the embedded store generates its own pair when both are unset. */
  S3_ACCESS_KEY_ID: Type.Optional(Type.String({ minLength: 1 })),
  S3_SECRET_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  S3_FORCE_PATH_STYLE: Type.Boolean({ default: true }),
})

type S3Credentials =
  | { endpoint: string; accessKeyId: string; secretAccessKey: string }
  | { endpoint: undefined; accessKeyId: string | undefined; secretAccessKey: string | undefined }

export type S3Config = Readonly<{ bucket: string; region: string; forcePathStyle: boolean } & S3Credentials>

export type CloudConfig = Readonly<{
  port: number
  host: string
  publicUrl: string
  dataDir: string
  databaseUrl: string | undefined
  redisUrl: string | undefined
  stripeWebhookSecret: string | undefined
  /** Stripe Checkout and Customer Portal; undefined when STRIPE_SECRET_KEY is not set. */
  billing: BillingConfig | undefined
  smtpUrl: string | undefined
  mailFrom: string
  demoAccount: boolean
  logLevel: Static<typeof CloudEnv>['LOG_LEVEL']
  prettyLogs: boolean
  s3: S3Config
}>

/** Reads and checks the cloud's configuration once; throws a ConfigError naming every bad key. */
export function loadConfig(env: Record<string, string | undefined>): CloudConfig {
  const parsed = parseEnv(CloudEnv, env)
  return Object.freeze({
    port: parsed.CLOUD_PORT,
    host: parsed.CLOUD_HOST,
    publicUrl: (parsed.CLOUD_PUBLIC_URL ?? `http://${hostForUrl(parsed.CLOUD_HOST)}:${parsed.CLOUD_PORT}`).replace(
      /\/$/,
      '',
    ),
    dataDir: parsed.CLOUD_DATA_DIR,
    databaseUrl: parsed.DATABASE_URL,
    redisUrl: parsed.REDIS_URL,
    stripeWebhookSecret: parsed.STRIPE_WEBHOOK_SECRET,
    billing: billingConfig({
      secretKey: parsed.STRIPE_SECRET_KEY,
      priceId: parsed.STRIPE_PRICE_ID,
      apiUrl: parsed.STRIPE_API_URL,
      webhookSecret: parsed.STRIPE_WEBHOOK_SECRET,
    }),
    smtpUrl: parsed.SMTP_URL,
    mailFrom: parsed.MAIL_FROM,
    demoAccount: parsed.CLOUD_DEMO_ACCOUNT,
    logLevel: parsed.LOG_LEVEL,
    prettyLogs: parsed.LOG_PRETTY,
    s3: s3Config(parsed),
  })
}

function s3Config(parsed: Static<typeof CloudEnv>): S3Config {
  const { S3_ENDPOINT: endpoint, S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secretAccessKey } = parsed
  const common = { bucket: parsed.S3_BUCKET, region: parsed.S3_REGION, forcePathStyle: parsed.S3_FORCE_PATH_STYLE }
  if (endpoint === undefined && accessKeyId === undefined && secretAccessKey === undefined) {
    return Object.freeze({ ...common, endpoint, accessKeyId, secretAccessKey })
  }
  // An external store cannot work without both keys, and a lone key is a typo waiting to happen.
  if (accessKeyId === undefined || secretAccessKey === undefined) {
    const reason = endpoint === undefined ? 'the other S3 credential is set' : 'S3_ENDPOINT is set'
    const missing = accessKeyId === undefined ? ['S3_ACCESS_KEY_ID'] : []
    if (secretAccessKey === undefined) {
      missing.push('S3_SECRET_ACCESS_KEY')
    }
    throw new ConfigError(missing.map((key) => `${key}: required when ${reason}`))
  }
  return Object.freeze({ ...common, endpoint, accessKeyId, secretAccessKey })
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') {
    return '127.0.0.1'
  }
  return host.includes(':') ? `[${host}]` : host
}
