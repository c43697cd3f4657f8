import { ConfigError } from '@relay/server-kit'
import { describe, expect, it } from 'vitest'
import { loadConfig } from './config.js'

describe('cloud config', () => {
  it('uses the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 8787,
      host: '127.0.0.1',
      publicUrl: 'http://127.0.0.1:8787',
      dataDir: './data/cloud',
      databaseUrl: undefined,
      redisUrl: undefined,
      stripeWebhookSecret: undefined,
      smtpUrl: undefined,
      mailFrom: 'Relay Cloud <no-reply@relay.local>',
      demoAccount: false,
      logLevel: 'info',
      prettyLogs: false,
      s3: {
        endpoint: undefined,
        bucket: 'relay-backups',
        region: 'us-east-1',
        accessKeyId: undefined,
        secretAccessKey: undefined,
        forcePathStyle: true,
      },
    })
  })

  it('reads an external object store', () => {
    const { s3 } = loadConfig({
      S3_ENDPOINT: 'https://s3.eu-central-1.amazonaws.com',
      S3_BUCKET: 'team-backups',
      S3_REGION: 'eu-central-1',
      S3_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      S3_SECRET_ACCESS_KEY: 'secret',
      S3_FORCE_PATH_STYLE: 'false',
    })
    expect(s3).toEqual({
      endpoint: 'https://s3.eu-central-1.amazonaws.com',
      bucket: 'team-backups',
      region: 'eu-central-1',
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'secret',
      forcePathStyle: false,
    })
    expect(Object.isFrozen(s3)).toBe(true)
  })

  it('requires both S3 credentials with S3_ENDPOINT, naming what is missing', () => {
    const attempt = () => loadConfig({ S3_ENDPOINT: 'http://127.0.0.1:9000' })
    expect(attempt).toThrow(ConfigError)
    expect(attempt).toThrow(/S3_ACCESS_KEY_ID: required when S3_ENDPOINT is set/)
    expect(attempt).toThrow(/S3_SECRET_ACCESS_KEY: required when S3_ENDPOINT is set/)
    const secretMissing = () => loadConfig({ S3_ENDPOINT: 'http://127.0.0.1:9000', S3_ACCESS_KEY_ID: 'a' })
    expect(secretMissing).toThrow(/S3_SECRET_ACCESS_KEY/)
    expect(secretMissing).not.toThrow(/S3_ACCESS_KEY_ID/)
  })

  it('refuses a lone S3 credential for the embedded store', () => {
    expect(() => loadConfig({ S3_SECRET_ACCESS_KEY: 'secret' })).toThrow(/S3_ACCESS_KEY_ID: required/)
    expect(loadConfig({ S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b' }).s3).toMatchObject({
      endpoint: undefined,
      accessKeyId: 'a',
      secretAccessKey: 'b',
    })
  })

  it('rejects an S3 endpoint that is not an http(s) URL', () => {
    expect(() => loadConfig({ S3_ENDPOINT: 'minio:9000', S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b' })).toThrow(
      /S3_ENDPOINT/,
    )
  })

  it('reads every key and treats blank values as unset', () => {
    const config = loadConfig({
      CLOUD_PORT: '9000',
      CLOUD_HOST: '0.0.0.0',
      CLOUD_PUBLIC_URL: 'https://cloud.example.com/',
      DATABASE_URL: 'postgres://u@db:5432/relay',
      REDIS_URL: 'redis://127.0.0.1:6379',
      STRIPE_WEBHOOK_SECRET: 'whsec_test',
      CLOUD_DEMO_ACCOUNT: 'true',
      LOG_LEVEL: 'warn',
      CLOUD_DATA_DIR: ' ',
    })
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      publicUrl: 'https://cloud.example.com',
      databaseUrl: 'postgres://u@db:5432/relay',
      redisUrl: 'redis://127.0.0.1:6379',
      stripeWebhookSecret: 'whsec_test',
      demoAccount: true,
      logLevel: 'warn',
      dataDir: './data/cloud',
    })
    expect(Object.isFrozen(config)).toBe(true)
  })

  it('names every bad key in one error', () => {
    const attempt = () => loadConfig({ CLOUD_PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' })
    expect(attempt).toThrow(ConfigError)
    try {
      attempt()
    } catch (err) {
      const { problems, message } = err as ConfigError
      expect(problems).toHaveLength(3)
      expect(message).toContain('CLOUD_PORT')
      expect(message).toContain('LOG_LEVEL')
      expect(message).toContain('DATABASE_URL')
    }
  })

  it('rejects a port out of range', () => {
    expect(() => loadConfig({ CLOUD_PORT: '70000' })).toThrow(/CLOUD_PORT/)
  })
})
