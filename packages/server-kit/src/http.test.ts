import { AppError } from '@relay/contracts'
import { Type } from 'typebox'
import { describe, expect, it } from 'vitest'
import { createHttpServer } from './http.js'

function serverWithLog() {
  const lines: string[] = []
  const app = createHttpServer({
    logger: { level: 'info', pretty: false, stream: { write: (line) => lines.push(line) } },
  })
  return { app, lines }
}

describe('http server', () => {
  it('never writes credentials or query strings to the log', async () => {
    const { app, lines } = serverWithLog()
    app.post('/login', async (request) => {
      request.log.info({ body: request.body }, 'login attempt')
      return { ok: true }
    })
    await app.inject({
      method: 'POST',
      url: '/login?code=oauth-code-123&state=s',
      headers: { authorization: 'Bearer secret-access-token', cookie: 'relay_session=cookie-secret' },
      payload: { password: 'hunter2', refreshToken: 'refresh-secret', accessToken: 'access-secret' },
    })
    const log = lines.join('\n')
    expect(log).toContain('login attempt')
    expect(log).toContain('[redacted]')
    for (const secret of [
      'secret-access-token',
      'cookie-secret',
      'hunter2',
      'refresh-secret',
      'access-secret',
      'oauth-code-123',
    ]) {
      expect(log).not.toContain(secret)
    }
  })

  it('sends the headers an AppError carries, from a handler, a hook or a plugin', async () => {
    const { app } = serverWithLog()
    const refusal = () => new AppError('RATE_LIMITED', 'Slow down', { headers: { 'Retry-After': '42' } })
    app.get('/handler', async () => {
      throw refusal()
    })
    app.get('/hook', { onRequest: async () => Promise.reject(refusal()) }, async () => ({ ok: true }))
    await app.register(async (scope) => {
      scope.get('/scoped', async () => {
        throw refusal()
      })
    })
    for (const url of ['/handler', '/hook', '/scoped']) {
      const res = await app.inject({ url })
      expect(res.statusCode, url).toBe(429)
      expect(res.headers['retry-after'], url).toBe('42')
      expect(res.json(), url).toEqual({ success: false, error: 'Slow down', code: 'RATE_LIMITED' })
    }
  })

  it('maps an AppError to its status and the contract body', async () => {
    const { app } = serverWithLog()
    app.get('/conflict', async () => {
      throw new AppError('CONFLICT', 'Backup is not pending')
    })
    const res = await app.inject({ url: '/conflict' })
    expect(res.statusCode).toBe(409)
    expect(res.json()).toEqual({ success: false, error: 'Backup is not pending', code: 'CONFLICT' })
  })

  it('hides the message of unexpected errors and logs them', async () => {
    const { app, lines } = serverWithLog()
    app.get('/boom', async () => {
      throw new Error('connection string postgres://user:pw@db failed')
    })
    const res = await app.inject({ url: '/boom' })
    expect(res.statusCode).toBe(500)
    expect(res.json()).toEqual({ success: false, error: 'Internal server error', code: 'INTERNAL' })
    expect(lines.join('\n')).toContain('request failed')
  })

  it('coerces query strings but never bodies', async () => {
    const { app } = serverWithLog()
    const schema = Type.Object({ limit: Type.Integer() })
    app.get('/query', { schema: { querystring: schema } }, async (request) => request.query)
    app.post('/body', { schema: { body: schema } }, async (request) => request.body)
    expect((await app.inject({ url: '/query?limit=5' })).json()).toEqual({ limit: 5 })
    const res = await app.inject({ method: 'POST', url: '/body', payload: { limit: '5' } })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'INVALID_REQUEST', details: [{ path: 'body/limit' }] })
  })

  it('rejects properties a schema does not allow instead of dropping them', async () => {
    const { app } = serverWithLog()
    const schema = Type.Object({ a: Type.String() }, { additionalProperties: false })
    app.post('/strict', { schema: { body: schema } }, async (request) => request.body)
    const res = await app.inject({ method: 'POST', url: '/strict', payload: { a: 'x', b: 'y' } })
    expect(res.statusCode).toBe(400)
  })

  it('answers router errors (bad URL encoding, overlong parameter) with the contract body', async () => {
    const { app } = serverWithLog()
    app.get('/items/:id', async (request) => request.params)
    for (const url of ['/items/%E0%A4%A', `/items/${'x'.repeat(101)}`]) {
      const res = await app.inject({ url })
      expect(res.statusCode, url).toBe(400)
      expect(res.json()).toMatchObject({ success: false, code: 'INVALID_REQUEST' })
    }
  })
})
