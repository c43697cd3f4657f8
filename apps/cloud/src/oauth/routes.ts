import middie from '@fastify/middie'
import type { HttpServer, SignInThrottle } from '@relay/server-kit'
import type { IdentityDirectory } from '../directory/directory.js'
import { oauthPrefix } from './provider.js'
import type { OAuthServer } from './server.js'
import { signInRoutes } from './sign-in.js'

export type OAuthRoutesOptions = { oauth: OAuthServer; directory: IdentityDirectory; throttle: SignInThrottle }

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
    // These routes only bring /oauth requests into this scope; the provider has answered before they run.
    // Public: the authorization server is where tokens come from, and it authenticates its clients itself.
    const unreachable = async () => {
      throw new Error('the authorization server did not answer')
    }
    scope.all(oauthPrefix, { config: { public: true } }, unreachable)
    scope.all(`${oauthPrefix}/*`, { config: { public: true } }, unreachable)
  })
  await app.register(signInRoutes, { oauth, directory, throttle })
}
