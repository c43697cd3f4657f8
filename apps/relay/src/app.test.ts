import { readFileSync } from 'node:fs'
import path from 'node:path'
import { ErrorBody, RelayHealth } from '@relay/contracts'
import { tempDir } from '@relay/testkit'
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import { startRelay, testConfig } from '../test/app.js'
import { createApp, version } from './app.js'
import { openDatabase } from './db/database.js'

describe('relay app', () => {
  it('reports version, backend id and a reachable SQLite database on /api/health', async () => {
    const { app, dataDir } = await startRelay()
    const res = await app.inject({ method: 'GET', url: '/api/health' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(Value.Check(RelayHealth, body)).toBe(true)
    expect(body).toMatchObject({ status: 'ok', version, db: { ok: true, driver: 'sqlite' } })
    const identity = JSON.parse(readFileSync(path.join(dataDir, 'identity.json'), 'utf8'))
    expect(body.backendId).toBe(identity.backendId)
  })

  it('keeps its backend id and data across a restart', async () => {
    const folder = tempDir()
    try {
      const config = testConfig(folder.path, { RELAY_WEB_DIR: folder.path })
      const first = await createApp(config)
      const before = (await first.inject({ url: '/api/health' })).json().backendId
      await first.close()
      const second = await createApp(config)
      const after = (await second.inject({ url: '/api/health' })).json().backendId
      await second.close()
      expect(after).toBe(before)
    } finally {
      folder.remove()
    }
  })

  it('answers 503 with the health body when the database is closed', async () => {
    const folder = tempDir()
    const database = openDatabase(folder.path)
    const app = await createApp(testConfig(folder.path, { RELAY_WEB_DIR: folder.path }), { database })
    await database.close()
    const res = await app.inject({ url: '/api/health' })
    expect(res.statusCode).toBe(503)
    expect(res.json()).toMatchObject({ status: 'degraded', db: { ok: false } })
    await app.close()
    folder.remove()
  })

  describe('errors', () => {
    async function appWithProbe() {
      const { app } = await startRelay()
      app.post('/api/probe', { schema: { body: Type.Object({ count: Type.Integer({ maximum: 10 }) }) } }, async () => ({
        ok: true,
      }))
      return app
    }

    it('answers an unknown /api route with a 404 error body, for every method', async () => {
      const app = await appWithProbe()
      for (const method of ['GET', 'POST', 'DELETE'] as const) {
        const res = await app.inject({ method, url: '/api/nothing-here' })
        expect(res.statusCode).toBe(404)
        expect(res.json()).toEqual({
          success: false,
          error: `Route ${method} /api/nothing-here not found`,
          code: 'NOT_FOUND',
        })
      }
    })

    it('rejects malformed JSON, a wrong content type, wrong types and oversize values with 4xx bodies', async () => {
      const app = await appWithProbe()
      const cases = [
        { payload: '{"count":', type: 'application/json', status: 400, code: 'INVALID_REQUEST' },
        { payload: 'count=1', type: 'application/x-www-form-urlencoded', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
        { payload: '{"count":"3"}', type: 'application/json', status: 400, code: 'INVALID_REQUEST' },
        { payload: '{"count":11}', type: 'application/json', status: 400, code: 'INVALID_REQUEST' },
        { payload: '', type: 'application/json', status: 400, code: 'INVALID_REQUEST' },
      ]
      for (const { payload, type, status, code } of cases) {
        const res = await app.inject({ method: 'POST', url: '/api/probe', payload, headers: { 'content-type': type } })
        expect({ payload, status: res.statusCode }).toEqual({ payload, status })
        expect(Value.Check(ErrorBody, res.json())).toBe(true)
        expect(res.json().code).toBe(code)
      }
    })
  })

  describe('web UI', () => {
    it('serves index.html for page paths outside /api (SPA fallback)', async () => {
      const { app } = await startRelay({ webUi: true })
      for (const url of ['/', '/system', '/notifications/history?page=2']) {
        const res = await app.inject({ url })
        expect(res.statusCode, url).toBe(200)
        expect(res.headers['content-type']).toMatch(/text\/html/)
        expect(res.headers['cache-control']).toBe('no-cache')
        expect(res.body).toContain('<div id="root">')
      }
      const asset = await app.inject({ url: '/assets/index-abc123.js' })
      expect(asset.statusCode).toBe(200)
      expect(asset.headers['cache-control']).toContain('immutable')
      expect((await app.inject({ url: '/assets/missing.js' })).json().code).toBe('NOT_FOUND')
      expect((await app.inject({ url: '/api/missing' })).json().code).toBe('NOT_FOUND')
      expect((await app.inject({ method: 'POST', url: '/system' })).statusCode).toBe(404)
    })

    it('explains that the UI is not built instead of failing', async () => {
      const { app } = await startRelay()
      const res = await app.inject({ url: '/system' })
      expect(res.statusCode).toBe(503)
      expect(res.json()).toMatchObject({ success: false, code: 'UNAVAILABLE' })
    })
  })
})
