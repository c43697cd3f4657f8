import middie from '@fastify/middie'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { IdentityDirectory } from '../directory/directory.js'
import { oauthPrefix } from './provider.js'
import type { OAuthServer } from './server.js'
import { type SignInThrottle, signInRoutes } from './sign-in.js'

export type OAuthRoutesOptions = { oauth: OAuthServer; directory: IdentityDirectory; throttle: SignInThrottle }

/**
 * Mounts the authorization server under /oauth as Node middleware, ahead of Fastify's body
 * parsing (oidc-provider reads its own bodies), and the sign-in pages at /interaction.
 */
export const oauthRoutes = fp(async (app: FastifyInstance, { oauth, directory, throttle }: OAuthRoutesOptions) => {
  await app.register(middie)
  app.use(oauthPrefix, (req, res, next) => {
    oauth.handle(req, res).catch(next)
  })
  await app.register(signInRoutes, { oauth, directory, throttle })
})
