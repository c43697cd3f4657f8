import path from 'node:path'
import { ErrorBody, featureFlagDefaults } from '@relay/contracts'
import SQLite from 'better-sqlite3'
import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import { startRelay, testConfig } from '../../test/app.js'
import { createApp } from '../app.js'

const url = '/api/feature-flags'

describe('feature flags', () => {
  it('starts with the spec defaults', async () => {
    const { app } = await startRelay()
    const res = await app.inject({ url })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      notifications_enabled: true,
      notifications_backend_polling: true,
      notifications_polling_interval: 15000,
      notifications_max_concurrent: 5,
      notifications_api_calls: true,
      notifications_auth_events: true,
      notifications_cloud_sync: true,
      notifications_system: true,
      notifications_duration_success: 6000,
      notifications_duration_error: 8000,
    })
  })

  it('updates a subset, returns all flags, and keeps them across a restart', async () => {
    const { app, dataDir, webDir } = await startRelay()
    const res = await app.inject({
      method: 'PUT',
      url,
      payload: { notifications_system: false, notifications_max_concurrent: 3 },
    })
    expect(res.json()).toEqual({ ...featureFlagDefaults, notifications_system: false, notifications_max_concurrent: 3 })
    await app.close()
    const restarted = await createApp(testConfig(dataDir, { RELAY_WEB_DIR: webDir }))
    expect((await restarted.inject({ url })).json()).toMatchObject({
      notifications_system: false,
      notifications_max_concurrent: 3,
    })
    await restarted.close()
  })

  it.each([
    ['an unknown flag', { notifications_sound: true }],
    ['a boolean as a string', { notifications_enabled: 'false' }],
    ['a number as a string', { notifications_polling_interval: '15000' }],
    ['a fraction', { notifications_max_concurrent: 2.5 }],
    ['an interval under one second', { notifications_polling_interval: 10 }],
    ['zero visible notifications', { notifications_max_concurrent: 0 }],
    ['nothing to change', {}],
    ['a list', [true]],
  ])('rejects %s with 400 and changes nothing', async (_, payload) => {
    const { app } = await startRelay()
    const res = await app.inject({
      method: 'PUT',
      url,
      payload: JSON.stringify(payload),
      headers: { 'content-type': 'application/json' },
    })
    expect(res.statusCode).toBe(400)
    expect(Value.Check(ErrorBody, res.json())).toBe(true)
    expect(res.json().code).toBe('INVALID_REQUEST')
    expect((await app.inject({ url })).json()).toEqual(featureFlagDefaults)
  })

  it('rejects malformed JSON', async () => {
    const { app } = await startRelay()
    const res = await app.inject({
      method: 'PUT',
      url,
      payload: '{"notifications_enabled":',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('INVALID_REQUEST')
  })

  it('ignores a stored flag that is no longer valid, keeps the rest, and survives a damaged row', async () => {
    const { app, dataDir } = await startRelay()
    await app.inject({ method: 'PUT', url, payload: { notifications_api_calls: false } })
    const sqlite = new SQLite(path.join(dataDir, 'relay.db'))
    const store = sqlite.prepare("update app_settings set value = ? where key = 'feature_flags'")
    store.run(JSON.stringify({ notifications_api_calls: false, notifications_max_concurrent: 999, retired_flag: true }))
    expect((await app.inject({ url })).json()).toEqual({ ...featureFlagDefaults, notifications_api_calls: false })
    store.run('{ not json')
    expect((await app.inject({ url })).json()).toEqual(featureFlagDefaults)
    sqlite.close()
  })
})
