import { ConfigError } from '@relay/server-kit'
import { describe, expect, it } from 'vitest'
import { defaultWebDir, loadConfig } from './config.js'

describe('relay config', () => {
  it('uses the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 8080,
      host: '127.0.0.1',
      dataDir: './data/relay',
      webDir: defaultWebDir,
      cloudUrl: 'http://127.0.0.1:8787',
      notificationMaintenanceEvery: 60 * 60 * 1000,
      allowOpenNetwork: false,
      allowLinkLocal: false,
      logLevel: 'info',
      prettyLogs: false,
    })
    expect(defaultWebDir).toMatch(/apps[/\\]web[/\\]dist$/)
  })

  it('names every bad key in one error', () => {
    try {
      loadConfig({ RELAY_PORT: '-1', CLOUD_URL: 'ftp://cloud', LOG_PRETTY: 'maybe' })
      expect.unreachable('loadConfig accepted bad values')
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError)
      const { problems } = err as ConfigError
      expect(problems.map((problem) => problem.split(':')[0])).toEqual(['RELAY_PORT', 'CLOUD_URL', 'LOG_PRETTY'])
    }
  })

  it('strips a trailing slash from the cloud URL', () => {
    expect(loadConfig({ CLOUD_URL: 'https://cloud.example.com/' }).cloudUrl).toBe('https://cloud.example.com')
  })
})
