import type { AddressInfo } from 'node:net'
import { sameOriginPath, sessionCookieName } from '@relay/contracts'
import { freePort } from '@relay/testkit'
import { describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { startRelay } from '../../test/app.js'
import type { RelayApp } from '../app.js'
import { hostnameOf } from './host.js'

const ada = { username: 'ada', password: 'correct horse battery' }

/** `returnTo` values a browser would follow to another site, in the spellings attackers use. */
const offSite = [
  '//evil.example/x',
  '/\\evil.example/x',
  '/\\/evil.example',
  '/.//evil.example/x',
  '/./\\evil.example',
  '/x/..//evil.example',
  '/%2F%2Fevil.example',
  '/%2f/evil.example',
  '/%5Cevil.example',
  '/%2e%2e//evil.example',
  '/\t/evil.example',
  'https://evil.example/',
  'evil.example',
  'javascript:alert(1)',
  '',
]

async function relayWithClosedCloud(env: Record<string, string> = {}) {
  return startRelay({ env: { CLOUD_URL: `http://127.0.0.1:${await freePort()}`, ...env } })
}

describe('relay guard: where a sign-in may send the browser', () => {
  it.each(offSite)('refuses returnTo %j with 400 and no Location', async (returnTo) => {
    const { app } = await relayWithClosedCloud()
    const res = await app.inject({
      url: '/api/unified-auth/cloud/login',
      query: { returnTo },
      headers: { accept: 'text/html' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.json()).toMatchObject({ success: false, code: 'INVALID_REQUEST' })
  })

  it('returns to a path of the relay, with the outcome added', async () => {
    const { app } = await relayWithClosedCloud()
    const res = await app.inject({
      url: '/api/unified-auth/cloud/login',
      query: { returnTo: '/settings/account?tab=cloud#connection' },
      headers: { accept: 'text/html' },
    })
    // The cloud is down: the browser goes back at once and the page says so.
    expect(res.statusCode).toBe(302)
    expect(res.headers.location).toBe('/settings/account?tab=cloud&cloud=unreachable#connection')
  })

  it('accepts only paths that every URL parser reads as this origin', () => {
    for (const value of offSite) {
      expect(sameOriginPath(value), value).toBeNull()
    }
    expect(sameOriginPath('/')).toBe('/')
    expect(sameOriginPath('/backups?x=1')).toBe('/backups?x=1')
    expect(sameOriginPath(`/${'a'.repeat(600)}`)).toBeNull()
  })
})

describe('relay guard: the Host header', () => {
  it('reads a Host header as one authority, or refuses it', () => {
    expect(hostnameOf('127.0.0.1:8080')).toBe('127.0.0.1')
    expect(hostnameOf('LOCALHOST')).toBe('localhost')
    expect(hostnameOf('[::1]:8080')).toBe('[::1]')
    for (const forged of ['127.0.0.1:8080@evil.example', '127.0.0.1/evil', 'a b', '127.0.0.1:8080:1', '', '@evil']) {
      expect(hostnameOf(forged), forged).toBeNull()
    }
  })

  it.each([
    ['127.0.0.1:8080@evil.example', 403],
    ['127.0.0.1.evil.example', 403],
    ['localhost.evil.example:8080', 403],
    ['evil.example', 403],
    ['localhost:8080', 200],
    ['[::1]:8080', 200],
    ['127.0.0.1', 200],
  ])('answers Host %s with %i while listening on loopback', async (host, status) => {
    const { app } = await startRelay()
    const res = await app.inject({ url: '/api/collectors', headers: { host } })
    expect(res.statusCode).toBe(status)
  })
})

/** Opens the stream's WebSocket with these headers: the messages it gets, or the status of the refusal. */
function connect(app: RelayApp, streamId: string, headers: Record<string, string>) {
  const port = (app.server.address() as AddressInfo).port
  const client = new WebSocket(`ws://127.0.0.1:${port}/api/connections/streams/${streamId}/ws`, { headers })
  return new Promise<{ status: number; opened: boolean }>((resolve, reject) => {
    client.once('open', () => {
      client.terminate()
      resolve({ status: 101, opened: true })
    })
    client.once('unexpected-response', (_request, response) => {
      client.terminate()
      resolve({ status: response.statusCode ?? 0, opened: false })
    })
    client.once('error', reject)
  })
}

async function relayWithWebSocketStream() {
  const { app } = await startRelay()
  const res = await app.inject({
    method: 'POST',
    url: '/api/connections/streams',
    payload: { name: 'Wall feed', type: 'WebSocket' },
  })
  expect(res.statusCode).toBe(201)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, streamId: res.json().id as string, port: (app.server.address() as AddressInfo).port }
}

describe('relay guard: the stream WebSocket', () => {
  it('refuses a page of another site in mode none, and lets the relay’s own page in', async () => {
    const { app, streamId, port } = await relayWithWebSocketStream()
    expect(await connect(app, streamId, { origin: 'http://evil.example' })).toEqual({ status: 403, opened: false })
    expect(await connect(app, streamId, { origin: `http://127.0.0.1:${port + 1}` })).toEqual({
      status: 403,
      opened: false,
    })
    expect(await connect(app, streamId, { origin: 'null' })).toEqual({ status: 403, opened: false })
    expect(await connect(app, streamId, { origin: `http://127.0.0.1:${port}` })).toEqual({ status: 101, opened: true })
  })

  it('needs a session in local mode', async () => {
    const { app, streamId, port } = await relayWithWebSocketStream()
    const setup = await app.inject({ method: 'POST', url: '/api/unified-auth/local/setup', payload: ada })
    const session = setup.cookies.find((cookie) => cookie.name === sessionCookieName)?.value ?? ''
    const origin = `http://127.0.0.1:${port}`
    expect(await connect(app, streamId, { origin })).toEqual({ status: 401, opened: false })
    expect(await connect(app, streamId, { origin, cookie: `${sessionCookieName}=forged` })).toEqual({
      status: 401,
      opened: false,
    })
    expect(await connect(app, streamId, { origin, cookie: `${sessionCookieName}=${session}` })).toEqual({
      status: 101,
      opened: true,
    })
    expect(
      await connect(app, streamId, { origin: 'http://evil.example', cookie: `${sessionCookieName}=${session}` }),
    ).toEqual({ status: 403, opened: false })
  })
})
