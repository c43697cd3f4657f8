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
      demoAccount: false,
      logLevel: 'info',
      prettyLogs: false,
    })
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
