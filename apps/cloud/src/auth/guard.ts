import { AppError, deviceTokenForbiddenMessage } from '@relay/contracts'
import type { FastifyInstance } from 'fastify'
import type { Principal, TokenVerifier } from './tokens.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, set by the access-token guard on every route behind it. */
    principal: Principal
  }
  interface FastifyContextConfig {
    /** Device tokens get 403 here: the route acts for a user. */
    userTokensOnly?: boolean
  }
}

const bearer = /^Bearer +([\w-]+\.[\w-]+\.[\w-]*)$/i

/**
 * Puts every route of `scope` behind an access token. Runs before the body is read, so an
 * unauthenticated request costs no parsing.
 */
export function requireAccessToken(scope: FastifyInstance, verify: TokenVerifier): void {
  scope.decorateRequest('principal', null as unknown as Principal)
  scope.addHook('onRequest', async (request, reply) => {
    const token = bearer.exec(request.headers.authorization ?? '')?.[1]
    if (!token) {
      reply.header('www-authenticate', 'Bearer realm="relay-cloud"')
      throw new AppError('UNAUTHORIZED', 'A bearer access token is required')
    }
    try {
      request.principal = await verify(token)
    } catch (err) {
      reply.header('www-authenticate', 'Bearer realm="relay-cloud", error="invalid_token"')
      throw err
    }
    if (request.principal.type === 'device' && request.routeOptions.config.userTokensOnly) {
      throw new AppError('DEVICE_TOKEN_FORBIDDEN', deviceTokenForbiddenMessage)
    }
  })
}
