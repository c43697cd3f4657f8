import dns from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import net, { BlockList, type LookupFunction } from 'node:net'
import type { Duplex } from 'node:stream'
import tls from 'node:tls'
import { urlHost } from '@relay/contracts'

/** The setting that lets collectors and streams reach link-local and cloud metadata addresses. */
export const allowLinkLocalSetting = 'RELAY_ALLOW_LINK_LOCAL=true'

export type Refusal = 'link-local' | 'metadata'

const linkLocal = new BlockList()
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4')
linkLocal.addSubnet('fe80::', 10, 'ipv6')
// 169.254.0.0/16 written inside IPv6: IPv4-compatible and NAT64 forms (BlockList matches the mapped form itself).
linkLocal.addSubnet('::a9fe:0', 112, 'ipv6')
linkLocal.addSubnet('64:ff9b::a9fe:0', 112, 'ipv6')

// Cloud metadata services outside the link-local ranges: Alibaba Cloud, Oracle Cloud (legacy), AWS over IPv6.
const metadata = new BlockList()
metadata.addAddress('100.100.100.200', 'ipv4')
metadata.addAddress('192.0.0.192', 'ipv4')
metadata.addAddress('fd00:ec2::254', 'ipv6')
const metadataNames = new Set(['metadata.google.internal', 'metadata.goog'])

/**
 * Whether the relay refuses to connect to an IP address (dotted IPv4, or IPv6 with or without
 * brackets): link-local, where most cloud metadata services answer, or another known metadata
 * address. Any other address, LAN and loopback included, is fine.
 */
export function refusalOf(address: string): Refusal | undefined {
  const bare = address.replace(/^\[(.*)\]$/, '$1')
  const family = net.isIP(bare)
  if (family === 0) {
    return undefined
  }
  const type = family === 4 ? 'ipv4' : 'ipv6'
  if (linkLocal.check(bare, type)) {
    return 'link-local'
  }
  return metadata.check(bare, type) ? 'metadata' : undefined
}

/** Thrown, and given to sockets, when a connection would go to a refused address. */
export class AddressRefusedError extends Error {
  /** Socket errors need a code for some clients (mqtt.js) to report them at all. */
  readonly code = 'ERR_ADDRESS_REFUSED'
  override readonly name = 'AddressRefusedError'
}

const refusalNames = { 'link-local': 'a link-local address', metadata: 'a cloud metadata service' } as const

/** `subject` says what the address is ("169.254.169.254 is a link-local address"); the rest says how to allow it. */
function refusalMessage(subject: string): string {
  return `${subject}; the relay does not connect to link-local or cloud metadata addresses unless it is started with ${allowLinkLocalSetting}`
}

export type ResolvedAddress = { address: string; family: number }
/** Every address a host name resolves to (the system resolver by default; tests pass their own). */
export type Resolve = (hostname: string, options: { family?: number; hints?: number }) => Promise<ResolvedAddress[]>

const systemResolve: Resolve = (hostname, { family, hints }) =>
  dns.promises.lookup(hostname, { all: true, family: family ?? 0, ...(hints ? { hints } : {}) })

export type ReachOptions = { allowLinkLocal: boolean; resolve?: Resolve }

/**
 * What collectors and streams may connect to. Everything except link-local and cloud metadata
 * addresses (unless allowed): reaching devices on the LAN and on this machine is the relay's job.
 * A URL is checked when it is saved (its host as written) and again at every connection (each
 * address its name resolves to, so a name pointing at 169.254.169.254 is caught too).
 */
export function createReach({ allowLinkLocal, resolve = systemResolve }: ReachOptions) {
  /** Why a host as written (a name or an IP address) must not be connected to. */
  function refusalOfHost(host: string): string | undefined {
    if (allowLinkLocal) {
      return undefined
    }
    if (metadataNames.has(host)) {
      return refusalMessage(`${host} is the name of ${refusalNames.metadata}`)
    }
    const refusal = refusalOf(host)
    return refusal ? refusalMessage(`${host} is ${refusalNames[refusal]}`) : undefined
  }

  /**
   * A `lookup` for sockets: resolves as usual and drops refused addresses, failing when none is
   * left. The socket connects only to what this returns, so a name cannot resolve to one address
   * when checked and another when connected.
   */
  const lookup: LookupFunction = (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family || undefined
    resolve(hostname, { family, hints: options.hints }).then(
      (resolved) => {
        const matching = resolved.filter((entry) => family === undefined || entry.family === family)
        const allowed = allowLinkLocal ? matching : matching.filter((entry) => refusalOf(entry.address) === undefined)
        const [first] = allowed
        if (first === undefined) {
          const refused = matching[0]
          const refusal = refused && refusalOf(refused.address)
          const error = refusal
            ? new AddressRefusedError(
                refusalMessage(`${hostname} resolves to ${refused.address}, ${refusalNames[refusal]}`),
              )
            : Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname })
          callback(error, '')
        } else if (options.all) {
          callback(null, allowed)
        } else {
          callback(null, first.address, first.family)
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    )
  }

  const agents = {
    'http:': new http.Agent({ keepAlive: true, lookup }),
    'https:': new https.Agent({ keepAlive: true, lookup }),
  }

  return {
    lookup,

    /** Why the host of `url` must not be connected to, as a sentence; undefined when it may be. */
    refusalOfUrl(url: string | URL): string | undefined {
      const host = urlHost(String(url))
      return host === undefined ? undefined : refusalOfHost(host)
    },

    /** The keep-alive agent for an http: or https: URL; its connections go through `lookup`. */
    agentFor(url: URL): http.Agent {
      return url.protocol === 'https:' ? agents['https:'] : agents['http:']
    },

    /**
     * A TCP (or TLS) connection to host:port that honours the rules: an IP address is checked here,
     * since Node connects to one without calling `lookup`; a name is checked by `lookup`.
     */
    connect(target: { host: string; port: number; tls: boolean }): Duplex {
      const refusal = refusalOfHost(target.host)
      if (refusal) {
        const socket = new net.Socket()
        process.nextTick(() => socket.destroy(new AddressRefusedError(refusal)))
        return socket
      }
      if (!target.tls) {
        return net.connect({ host: target.host, port: target.port, lookup })
      }
      const servername = net.isIP(target.host) === 0 ? target.host : undefined
      return tls.connect({ host: target.host, port: target.port, servername, lookup })
    },
  }
}

export type Reach = ReturnType<typeof createReach>
