import type { LookupAddress } from 'node:dns'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { keepsAccessToken, urlHost, urlOrigin } from '@relay/contracts'
import { afterEach, describe, expect, it } from 'vitest'
import { genericApiCollector } from './drivers/generic-api.js'
import { httpStream } from './drivers/http-stream.js'
import type { StreamPayload } from './drivers/types.js'
import { AddressRefusedError, createReach, type Resolve, refusalOf } from './reach.js'

/** A resolver for names no real DNS knows, so a test decides where each name points. */
function resolverOf(names: Record<string, string[]>): Resolve {
  return async (hostname) => {
    const addresses = names[hostname]
    if (!addresses) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    }
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
}

const names = resolverOf({
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['fe80::1', '192.168.1.5'],
  'lan.test': ['127.0.0.1'],
  'mapped.test': ['::ffff:169.254.169.254'],
})
const guarded = createReach({ allowLinkLocal: false, resolve: names })
const allowing = createReach({ allowLinkLocal: true, resolve: names })

function lookup(reach: typeof guarded, hostname: string, all: boolean): Promise<LookupAddress[] | string> {
  return new Promise((resolve, reject) => {
    reach.lookup(hostname, { all }, (err, address) => (err ? reject(err) : resolve(address)))
  })
}

describe('the address classifier', () => {
  it.each([
    ['169.254.0.0', 'link-local'],
    ['169.254.169.254', 'link-local'],
    ['169.254.170.2', 'link-local'],
    ['169.254.255.255', 'link-local'],
    ['fe80::1', 'link-local'],
    ['FE80::abcd:1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['[fe80::1]', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['[::ffff:a9fe:a9fe]', 'link-local'],
    ['::169.254.169.254', 'link-local'],
    ['64:ff9b::169.254.169.254', 'link-local'],
    ['100.100.100.200', 'metadata'],
    ['::ffff:100.100.100.200', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
  ])('refuses %s as %s', (address, refusal) => {
    expect(refusalOf(address)).toBe(refusal)
  })

  it.each([
    '169.253.255.255',
    '169.255.0.0',
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.5',
    '192.168.1.20',
    '100.100.100.100',
    '0.0.0.0',
    '::1',
    'fec0::1',
    'fd00::1',
    '::ffff:192.168.1.20',
    'example.com',
  ])('lets %s through', (address) => {
    expect(refusalOf(address)).toBeUndefined()
  })
})

describe('URLs checked as written', () => {
  it.each([
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ['http://2852039166/', '169.254.169.254 is a link-local address'],
    ['http://0xa9fea9fe/', '169.254.169.254 is a link-local address'],
    ['http://0251.0376.0251.0376/', '169.254.169.254 is a link-local address'],
    ['http://169.254.169.254./', '169.254.169.254 is a link-local address'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe is a link-local address'],
    ['https://[fe80::1]:8443/x', 'fe80::1 is a link-local address'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal is the name of a cloud'],
    ['http://METADATA.Google.Internal./', 'metadata.google.internal is the name of a cloud'],
    ['http://100.100.100.200/latest/meta-data/', '100.100.100.200 is a cloud metadata service'],
    ['mqtt://0xa9fea9fe:1883', '169.254.169.254 is a link-local address'],
    ['mqtt://2852039166', '169.254.169.254 is a link-local address'],
    ['mqtts://[FE80::1]', 'fe80::1 is a link-local address'],
  ])('refuses %s, saying why and how to allow it', (url, reason) => {
    const refusal = guarded.refusalOfUrl(url)
    expect(refusal).toContain(reason)
    expect(refusal).toContain('RELAY_ALLOW_LINK_LOCAL=true')
    expect(allowing.refusalOfUrl(url)).toBeUndefined()
  })

  it.each([
    'http://127.0.0.1:8080/data',
    'http://localhost/data',
    'http://192.168.1.20/api',
    'https://sensors.example.com/',
    'http://[::1]:9000/',
    'mqtt://broker.lan:1883',
    'mqtt://10.0.0.5',
    'not a url',
  ])('lets %s through', (url) => {
    expect(guarded.refusalOfUrl(url)).toBeUndefined()
  })

  it('reads the host as the network does', () => {
    expect(urlHost('mqtt://Broker.LAN:1883')).toBe('broker.lan')
    expect(urlHost('mqtt://0xa9fea9fe')).toBe('169.254.169.254')
    expect(urlHost('http://[FE80::1]/')).toBe('fe80::1')
    expect(urlHost('nope')).toBeUndefined()
  })
})

describe('origins', () => {
  it('fill in default ports and ignore case and paths', () => {
    expect(urlOrigin('http://sensors.lan/a')).toBe(urlOrigin('HTTP://Sensors.LAN:80/b?c=1'))
    expect(urlOrigin('https://sensors.lan/')).toBe(urlOrigin('https://sensors.lan:443/x'))
    expect(urlOrigin('mqtt://Broker.lan')).toBe(urlOrigin('mqtt://broker.lan:1883/'))
    expect(urlOrigin('mqtts://broker.lan')).toBe('mqtts://broker.lan:8883')
    expect(urlOrigin('http://[::1]/')).toBe('http://[::1]:80')
  })

  it('differ in scheme, host or port', () => {
    const base = urlOrigin('http://sensors.lan:8080/data')
    expect(urlOrigin('https://sensors.lan:8080/data')).not.toBe(base)
    expect(urlOrigin('http://other.lan:8080/data')).not.toBe(base)
    expect(urlOrigin('http://sensors.lan:8081/data')).not.toBe(base)
    expect(urlOrigin('http://user:pw@sensors.lan:8080/other')).toBe(base)
  })

  it('bind a token: kept within one origin or without any address, dropped on any move', () => {
    expect(keepsAccessToken('http://a.lan/x', 'http://A.lan:80/y')).toBe(true)
    expect(keepsAccessToken(undefined, undefined)).toBe(true)
    expect(keepsAccessToken('http://a.lan/x', 'http://b.lan/x')).toBe(false)
    expect(keepsAccessToken('http://a.lan/x', undefined)).toBe(false)
    expect(keepsAccessToken(undefined, 'http://a.lan/x')).toBe(false)
    expect(keepsAccessToken('mqtt://a.lan', 'mqtts://a.lan')).toBe(false)
  })
})

describe('the connect-time lookup', () => {
  it('refuses a name that resolves only to refused addresses, naming both', async () => {
    const failure = lookup(guarded, 'metadata.test', true)
    await expect(failure).rejects.toBeInstanceOf(AddressRefusedError)
    await expect(failure).rejects.toThrow(
      'metadata.test resolves to 169.254.169.254, a link-local address; the relay does not connect to link-local ' +
        'or cloud metadata addresses unless it is started with RELAY_ALLOW_LINK_LOCAL=true',
    )
    await expect(lookup(guarded, 'mapped.test', false)).rejects.toThrow(/mapped\.test resolves to ::ffff:169\.254/)
  })

  it('connects only to the allowed addresses of a name that has both', async () => {
    expect(await lookup(guarded, 'mixed.test', true)).toEqual([{ address: '192.168.1.5', family: 4 }])
    expect(await lookup(guarded, 'mixed.test', false)).toBe('192.168.1.5')
  })

  it('passes every address through when link-local is allowed', async () => {
    expect(await lookup(allowing, 'metadata.test', false)).toBe('169.254.169.254')
    expect(await lookup(allowing, 'mixed.test', true)).toEqual([
      { address: 'fe80::1', family: 6 },
      { address: '192.168.1.5', family: 4 },
    ])
  })

  it('passes resolver errors through unchanged', async () => {
    await expect(lookup(guarded, 'unknown.test', true)).rejects.toMatchObject({ code: 'ENOTFOUND' })
  })
})

describe('drivers connect through the reach', () => {
  type Seen = { path: string | undefined; authorization: string | undefined }
  const servers: Server[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  /** A local server that records what it receives; `answer` may redirect. */
  async function recorder(answer: (path: string) => { status: number; location?: string } = () => ({ status: 200 })) {
    const seen: Seen[] = []
    const server = createServer((req, res) => {
      seen.push({ path: req.url, authorization: req.headers.authorization })
      req.resume()
      const { status, location } = answer(req.url ?? '/')
      res.writeHead(status, { 'content-type': 'application/json', ...(location ? { location } : {}) })
      res.end(JSON.stringify({ temp: 21 }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    servers.push(server)
    return { port: (server.address() as AddressInfo).port, seen }
  }

  const within = () => AbortSignal.timeout(5000)

  it('a GenericAPI collector reads a name through the resolver and refuses one that points at link-local', async () => {
    const api = await recorder()
    const lan = genericApiCollector({ url: `http://lan.test:${api.port}/data` }, null, guarded)
    expect(await lan.fetch(within())).toEqual([{ externalId: 'temp', name: 'temp', unit: null, value: 21 }])
    expect(api.seen).toEqual([{ path: '/data', authorization: undefined }])

    const metadata = genericApiCollector({ url: `http://metadata.test:${api.port}/` }, 'token', guarded)
    await expect(metadata.fetch(within())).rejects.toThrow(
      `Cannot reach http://metadata.test:${api.port}/: metadata.test resolves to 169.254.169.254, a link-local address`,
    )
    const literal = genericApiCollector({ url: 'http://0xa9fea9fe/' }, null, guarded)
    await expect(literal.fetch(within())).rejects.toThrow(/169\.254\.169\.254 is a link-local address/)
  })

  it('refuses a redirect to a refused address, whether written as an address or a name', async () => {
    const api = await recorder((path) =>
      path === '/name'
        ? { status: 302, location: `http://metadata.test:${api.port}/` }
        : { status: 302, location: 'http://2852039166/latest/meta-data/' },
    )
    const byName = genericApiCollector({ url: `http://127.0.0.1:${api.port}/name` }, null, guarded)
    await expect(byName.fetch(within())).rejects.toThrow(/metadata\.test resolves to 169\.254\.169\.254/)
    const byAddress = genericApiCollector({ url: `http://127.0.0.1:${api.port}/address` }, null, guarded)
    await expect(byAddress.fetch(within())).rejects.toThrow(/169\.254\.169\.254 is a link-local address/)
    expect(api.seen.map((request) => request.path)).toEqual(['/name', '/address'])
  })

  it('keeps the token on same-origin redirects and drops it at the first redirect to another origin', async () => {
    const other = await recorder()
    const api = await recorder((path) => {
      if (path === '/start') {
        return { status: 301, location: '/moved' }
      }
      return path === '/moved' ? { status: 307, location: `http://127.0.0.1:${other.port}/elsewhere` } : { status: 200 }
    })
    const collector = genericApiCollector({ url: `http://127.0.0.1:${api.port}/start` }, 'secret-token', guarded)
    expect(await collector.fetch(within())).toHaveLength(1)
    expect(api.seen).toEqual([
      { path: '/start', authorization: 'Bearer secret-token' },
      { path: '/moved', authorization: 'Bearer secret-token' },
    ])
    expect(other.seen).toEqual([{ path: '/elsewhere', authorization: undefined }])
  })

  it('an HTTP stream refuses a name that resolves to link-local and sends to one on the LAN', async () => {
    const receiver = await recorder()
    const payload: StreamPayload = {
      junctionId: 'j',
      junctionName: 'J',
      deviceName: null,
      screenId: null,
      sentAt: '2025-01-01T00:00:00.000Z',
      sensors: [],
    }
    await httpStream({ url: `http://lan.test:${receiver.port}/in` }, guarded).send(payload, within())
    expect(receiver.seen.map((request) => request.path)).toEqual(['/in'])
    await expect(
      httpStream({ url: `http://metadata.test:${receiver.port}/in` }, guarded).send(payload, within()),
    ).rejects.toThrow(/metadata\.test resolves to 169\.254\.169\.254/)
  })
})
