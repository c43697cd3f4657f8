import { AppError, type AuthMode, type SessionUser, sessionCookieName } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { FastifyRequest } from 'fastify'
import type { CloudConnectionService } from '../cloud-client/connection.js'
import type { FrontendSessions } from './frontend-sessions.js'
import { hostnameOf, isLoopbackHost } from './host.js'

/** Who is calling: a frontend session's user, the cloud user of a bearer token, or nobody. */
export type RequestAuth = { user: SessionUser | null; sessionToken: string | null }

declare module 'fastify' {
  interface FastifyRequest {
    auth: RequestAuth
  }
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS'])

export type GuardOptions = {
  mode(): AuthMode
  sessions: FrontendSessions
  cloud: CloudConnectionService
  /** The relay listens on loopback only: then a request naming another host was sent by a rebound DNS name. */
  loopbackOnly: boolean
}

const anonymous: RequestAuth = { user: null, sessionToken: null }

/**
 * Every request: refuses foreign Host names (DNS rebinding) and cross-site state changes and
 * WebSocket upgrades, reads who is calling, and in local and cloud modes refuses callers without a
 * session on every route its definition does not mark public. It decides on the route the router
 * matched, never on the URL string, so no spelling of a path reaches a handler it should not.
 */
export function addAuthGuard(app: HttpServer, { mode, sessions, cloud, loopbackOnly }: GuardOptions) {
  app.decorateRequest('auth', null as unknown as RequestAuth)
  app.addHook('onRequest', async (request) => {
    request.auth = anonymous
    const hostname = hostnameOf(request.host ?? '')
    if (hostname === null || (loopbackOnly && !isLoopbackHost(hostname))) {
      throw new AppError('FORBIDDEN', 'The relay answers only on its loopback address')
    }
    const crossSite = isCrossSite(request)
    if (crossSite && (!safeMethods.has(request.method) || isWebSocketUpgrade(request))) {
      throw new AppError('FORBIDDEN', 'Cross-site request refused')
    }
    if (request.is404) {
      // No route matched: the not-found handler answers, no handler runs.
      return
    }
    const access = request.routeOptions.config.public
    const current = mode()
    const isPublic = access === true || (access === 'cloud-mode' && current === 'cloud')
    // Private routes are read by the relay's own pages only: another site gets nothing, in every mode.
    if (crossSite && !isPublic) {
      throw new AppError('FORBIDDEN', 'Cross-site request refused')
    }
    request.auth = await authenticate(request)
    if (!isPublic && current !== 'none' && request.auth.user === null) {
      throw new AppError('UNAUTHORIZED', 'Sign in to use the relay')
    }
  })

  async function authenticate(request: FastifyRequest): Promise<RequestAuth> {
    const sessionToken = request.cookies[sessionCookieName] ?? null
    if (sessionToken) {
      const user = await sessions.find(sessionToken)
      if (user) {
        return { user, sessionToken }
      }
    }
    const bearer = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(request.headers.authorization ?? '')?.[1]
    if (bearer && mode() === 'cloud') {
      const info = await cloud.validateBearer(bearer)
      if (info) {
        return {
          user: { kind: 'cloud', id: info.userId, name: info.name || info.email, email: info.email },
          sessionToken: null,
        }
      }
    }
    return anonymous
  }
}

function isWebSocketUpgrade(request: FastifyRequest): boolean {
  return request.headers.upgrade?.toLowerCase() === 'websocket'
}

/**
 * Browsers name the page that sent a request: a state change or a WebSocket from another site is
 * refused (CSRF, cross-site WebSocket hijacking). Clients that are not browsers send neither header.
 */
function isCrossSite(request: FastifyRequest): boolean {
  const fetchSite = request.headers['sec-fetch-site']
  if (fetchSite === 'cross-site' || fetchSite === 'same-site') {
    return true
  }
  const origin = request.headers.origin
  if (origin === undefined) {
    return false
  }
  try {
    const from = new URL(origin)
    // Parsed the same way, so a default port written out on one side still matches.
    return from.host !== new URL(`${from.protocol}//${request.host}`).host
  } catch {
    return true
  }
}
