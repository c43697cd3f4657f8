import {
  AppError,
  type AuthMode,
  publicApiPaths,
  type SessionUser,
  sessionCookieName,
  unifiedAuthRoutes,
} from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { FastifyRequest } from 'fastify'
import type { CloudConnectionService } from '../cloud-client/connection.js'
import type { FrontendSessions } from './frontend-sessions.js'

/** Who is calling: a frontend session's user, the cloud user of a bearer token, or nobody. */
export type RequestAuth = { user: SessionUser | null; sessionToken: string | null }

declare module 'fastify' {
  interface FastifyRequest {
    auth: RequestAuth
  }
}

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])
const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS'])

export const isLoopbackHost = (host: string) => loopbackHosts.has(host.toLowerCase())

export type GuardOptions = {
  mode(): AuthMode
  sessions: FrontendSessions
  cloud: CloudConnectionService
  /** The relay listens on loopback only: then a request naming another host was sent by a rebound DNS name. */
  loopbackOnly: boolean
}

const isApi = (path: string) => path === '/api' || path.startsWith('/api/')

/**
 * Every /api request: refuses cross-site state changes, reads who is calling, and in local and
 * cloud modes refuses callers without a session, except on the few paths that let them sign in.
 */
export function addAuthGuard(app: HttpServer, { mode, sessions, cloud, loopbackOnly }: GuardOptions) {
  app.decorateRequest('auth', null as unknown as RequestAuth)
  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?')[0] ?? ''
    if (!isApi(path)) {
      return
    }
    if (loopbackOnly && !isLoopbackHost(request.hostname)) {
      throw new AppError('FORBIDDEN', 'The relay answers only on its loopback address')
    }
    if (!safeMethods.has(request.method) && isCrossSite(request)) {
      throw new AppError('FORBIDDEN', 'Cross-site request refused')
    }
    request.auth = await authenticate(request)
    const current = mode()
    if (current === 'none' || request.auth.user || publicApiPaths.includes(path)) {
      return
    }
    if (current === 'cloud' && path === unifiedAuthRoutes.cloudLogin.url) {
      return
    }
    throw new AppError('UNAUTHORIZED', 'Sign in to use the relay')
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
    return { user: null, sessionToken: null }
  }
}

/** Browsers name the page that sent a request: a state change from another site is refused (CSRF). */
function isCrossSite(request: FastifyRequest): boolean {
  if (request.headers['sec-fetch-site'] === 'cross-site') {
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
