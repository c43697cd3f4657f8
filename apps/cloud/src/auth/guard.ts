import { AppError, deviceTokenForbiddenMessage } from '@relay/contracts'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { apiScope, type Principal, type TokenVerifier } from './tokens.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, set by the access-token guard on every route that is not public. */
    principal: Principal
  }
  interface FastifyContextConfig {
    /** Device tokens may call this route; every other private route answers them 403. */
    deviceTokens?: true
  }
}

const bearer = /^Bearer +([\w-]+\.[\w-]+\.[\w-]*)$/i

/**
 * The cloud's one guard, installed at the root before any route: it decides on the route the
 * router matched, never on the URL, so every way of writing a path meets the same decision. A
 * route needs a user access token unless its definition says `config: { public: true }` (the
 * relay's `'cloud-mode'` means nothing here) or `deviceTokens: true` lets devices in too. A
 * request that matches no route goes to the 404 handler, which runs no route code. Runs before
 * the body is read, so an unauthenticated request costs no parsing.
 */
export function guardRoutes(app: FastifyInstance, verify: TokenVerifier): void {
  app.decorateRequest('principal', null as unknown as Principal)
  app.addHook('onRequest', async (request, reply) => {
    const { config } = request.routeOptions
    if (request.is404 || config.public === true) {
      return
    }
    request.principal = await bearerPrincipal(request, reply, verify)
    if (request.principal.type === 'device' && config.deviceTokens !== true) {
      throw new AppError('DEVICE_TOKEN_FORBIDDEN', deviceTokenForbiddenMessage)
    }
    // A token a client asked for with fewer scopes (only `openid`, for UserInfo) does not open the API.
    if (!request.principal.scopes.has(apiScope)) {
      reply.header('www-authenticate', `Bearer realm="relay-cloud", error="insufficient_scope", scope="${apiScope}"`)
      throw new AppError('FORBIDDEN', `This access token was not issued for the ${apiScope} scope`)
    }
  })
}

/** The verified caller of the request's bearer token; 401 with a challenge when there is none. */
export async function bearerPrincipal(
  request: FastifyRequest,
  reply: FastifyReply,
  verify: TokenVerifier,
): Promise<Principal> {
  const token = bearer.exec(request.headers.authorization ?? '')?.[1]
  if (!token) {
    reply.header('www-authenticate', 'Bearer realm="relay-cloud"')
    throw new AppError('UNAUTHORIZED', 'A bearer access token is required')
  }
  try {
    return await verify(token)
  } catch (err) {
    reply.header('www-authenticate', 'Bearer realm="relay-cloud", error="invalid_token"')
    throw err
  }
}
