import { ErrorBody } from '@relay/contracts'
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testConfig } from '../test/app.js'
import { createTestDatabase, databaseKinds, type TestDatabase } from '../test/database.js'
import { type CloudApp, createApp, version } from './app.js'

describe.each(databaseKinds)('cloud app on %s', (kind) => {
  let database: TestDatabase
  let app: CloudApp

  beforeAll(async () => {
    database = await createTestDatabase(kind)
    app = await createApp(testConfig(database.dataDir), { database })
    // A probe route with a JSON body schema, to drive the app's own parsing and error handling.
    app.post(
      '/probe',
      { schema: { body: Type.Object({ name: Type.String({ maxLength: 10 }) }) }, config: { public: true } },
      async (request) => ({
        got: request.body,
      }),
    )
    await app.ready()
  })

  afterAll(async () => {
    await app?.close()
    await database?.dispose()
  })

  it('reports its version and a reachable database on /healthz', async () => {
    const res = await app.inject({ method: 'GET', url: '/healthz' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toMatchObject({ status: 'ok', version, db: { ok: true, driver: kind } })
  })

  it('keeps /healthz at 200 when the database is gone (readiness is /readyz)', async () => {
    const own = await createTestDatabase(kind)
    const broken = await createApp(testConfig(own.dataDir), { database: own })
    await own.close()
    const res = await broken.inject({ method: 'GET', url: '/healthz' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ version, db: { driver: kind } })
    await broken.close()
    await own.dispose().catch(() => {})
  })

  it('answers an unknown route with a 404 error body', async () => {
    const res = await app.inject({ method: 'GET', url: '/no/such/route?x=1' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ success: false, error: 'Route GET /no/such/route not found', code: 'NOT_FOUND' })
  })

  it('answers 404, not 400, for malformed JSON sent to an unknown route', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/nope',
      payload: '{bad',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.statusCode).toBe(404)
    expect(res.json().code).toBe('NOT_FOUND')
  })

  it('rejects malformed JSON with 400 INVALID_REQUEST and no stack trace', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/probe',
      payload: '{"name": ',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ success: false, error: 'Malformed JSON in request body', code: 'INVALID_REQUEST' })
    expect(res.body).not.toMatch(/at .*\.(js|ts):\d+/)
  })

  it('rejects an unsupported content type with 415', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/probe',
      payload: '<name/>',
      headers: { 'content-type': 'application/xml' },
    })
    expect(res.statusCode).toBe(415)
    expect(res.json()).toMatchObject({ success: false, code: 'UNSUPPORTED_MEDIA_TYPE' })
  })

  it('rejects wrong types and oversize values naming the field', async () => {
    const wrongType = await app.inject({ method: 'POST', url: '/probe', payload: { name: 42 } })
    expect(wrongType.statusCode).toBe(400)
    expect(wrongType.json()).toMatchObject({ code: 'INVALID_REQUEST', details: [{ path: 'body/name' }] })
    const oversize = await app.inject({ method: 'POST', url: '/probe', payload: { name: 'x'.repeat(11) } })
    expect(oversize.statusCode).toBe(400)
    expect(oversize.json().details[0].path).toBe('body/name')
    const missing = await app.inject({ method: 'POST', url: '/probe', payload: {} })
    expect(missing.json()).toMatchObject({ code: 'INVALID_REQUEST', details: [{ path: 'body/name' }] })
    for (const res of [wrongType, oversize, missing]) {
      expect(Value.Check(ErrorBody, res.json())).toBe(true)
    }
  })

  it('rejects a body over the size limit with 413', async () => {
    const res = await app.inject({ method: 'POST', url: '/probe', payload: { name: 'x'.repeat(2 * 1024 * 1024) } })
    expect(res.statusCode).toBe(413)
    expect(res.json().code).toBe('PAYLOAD_TOO_LARGE')
  })

  it('keeps migrations idempotent across restarts', async () => {
    const again = await createApp(testConfig(database.dataDir), { database })
    const tables = await database.db.introspection.getTables()
    expect(tables.map((table) => table.name)).toContain('users')
    await again.close()
  })
})
