import middie from '@fastify/middie'
import type { HttpServer, SignInThrottle } from '@relay/server-kit'
import type { IdentityDirectory } from '../directory/directory.js'
import { oauthPrefix } from './provider.js'
import type { OAuthServer } from './server.js'
import { signInRoutes } from './sign-in.js'

export type OAuthRoutesOptions = { oauth: OAuthServer; directory: IdentityDirectory; throttle: SignInThrottle }

/** RFC 8414 metadata: the issuer's path goes after the well-known name (§3); some clients ask without it. */
const metadataPrefix = '/.well-known/oauth-authorization-server'
const metadataPaths = [`${metadataPrefix}${oauthPrefix}`, metadataPrefix]
/** The provider's discovery document, under its mount. */
const discoveryPath = '/.well-known/openid-configuration'

/**
 * Mounts the authorization server under /oauth as Node middleware, ahead of Fastify's body
 * parsing (oidc-provider reads its own bodies), and the sign-in pages at /interaction. Middie
 * lives in a scope of its own, so other requests do not pay for its per-request work.
 */
export async function oauthRoutes(app: HttpServer, { oauth, directory, throttle }: OAuthRoutesOptions) {
  await app.register(async (scope) => {
    await scope.register(middie)
    scope.use(oauthPrefix, (req, res, next) => {
      oauth.handle(req, res).catch(next)
    })
    // Only the two metadata routes below bring such a request here. It gets the OpenID discovery
    // document, made by the provider from the same configuration: an internal forward to it.
    scope.use(metadataPrefix, (req, res, next) => {
      const request = req as typeof req & { originalUrl?: string }
      request.url = discoveryPath
      request.originalUrl = `${oauthPrefix}${discoveryPath}`
      oauth.handle(request, res).catch(next)
    })
    // These routes only bring /oauth requests into this scope; the provider has answered before they run.
    // Public: the authorization server is where tokens come from, and it authenticates its clients itself.
    const unreachable = async () => {
      throw new Error('the authorization server did not answer')
    }
    scope.all(oauthPrefix, { config: { public: true } }, unreachable)
    scope.all(`${oauthPrefix}/*`, { config: { public: true } }, unreachable)
    for (const path of metadataPaths) {
      scope.get(path, { config: { public: true } }, unreachable)
    }
  })
  await app.register(signInRoutes, { oauth, directory, throttle })
}
