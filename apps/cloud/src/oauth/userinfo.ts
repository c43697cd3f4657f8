import { AppError } from '@relay/contracts'
import type Provider from 'oidc-provider'
import type { TokenVerifier } from '../auth/tokens.js'
import type { Account, IdentityDirectory } from '../directory/directory.js'

/** Where the UserInfo endpoint lives under the issuer. */
export const userinfoPath = '/me'

/** The claims each OpenID scope releases, at the UserInfo endpoint and in ID tokens. */
export const scopeClaims = {
  openid: ['sub'],
  email: ['email', 'email_verified'],
  profile: ['name'],
} as const

/** Every claim the cloud can release about an account. */
export function accountClaims(account: Account) {
  return { sub: account.id, email: account.email, email_verified: account.emailVerified, name: account.name }
}

export type UserinfoDeps = {
  issuer: string
  verify: TokenVerifier
  directory: IdentityDirectory
  provider: Provider
}

type Middleware = Parameters<Provider['use']>[0]

const bearer = /^Bearer +([\w-]+\.[\w-]+\.[\w-]*)$/i

/**
 * The OpenID Connect UserInfo endpoint (GET and POST), answering to the access tokens the cloud
 * issues. oidc-provider's own endpoint only accepts opaque tokens without an audience, and every
 * token here is a JWT for the cloud API (resource indicators): this one checks such a token as the
 * API does (signature, issuer, audience, expiry), then that it carries `openid` and that its session
 * (the grant named by `sid`) is still live, and releases the claims of the token's scopes.
 * Errors follow RFC 6750: a status, a `WWW-Authenticate` challenge and a JSON body.
 */
export function userinfoEndpoint({ issuer, verify, directory, provider }: UserinfoDeps): Middleware {
  const realm = `Bearer realm="${issuer}"`

  return async (ctx, next) => {
    if (ctx.path !== userinfoPath || (ctx.method !== 'GET' && ctx.method !== 'POST')) {
      return next()
    }
    ctx.set('cache-control', 'no-store')
    const refuse = (status: number, error: string, description: string, challenge = `, error="${error}"`) => {
      ctx.status = status
      ctx.set('www-authenticate', `${realm}${challenge}`)
      ctx.body = { error, error_description: description }
    }

    if (ctx.query.access_token !== undefined) {
      return refuse(400, 'invalid_request', 'Send the access token in the Authorization header, not in the address.')
    }
    const token = bearer.exec(ctx.get('authorization'))?.[1]
    if (!token) {
      // RFC 6750 §3.1: a request without credentials gets a challenge without an error code.
      return refuse(401, 'invalid_token', 'An access token is required in the Authorization header.', '')
    }
    let principal: Awaited<ReturnType<TokenVerifier>>
    try {
      principal = await verify(token)
    } catch (err) {
      if (err instanceof AppError) {
        return refuse(401, 'invalid_token', err.message)
      }
      throw err
    }
    // The signature is verified: its claims can be read as they are.
    const { scopes } = principal
    if (principal.type !== 'user' || !scopes.has('openid')) {
      return refuse(
        403,
        'insufficient_scope',
        'This access token was not issued for the openid scope.',
        ', error="insufficient_scope", scope="openid"',
      )
    }
    const grant = principal.sessionId ? await provider.Grant.find(principal.sessionId) : undefined
    if (grant?.accountId !== principal.id) {
      return refuse(401, 'invalid_token', 'The session this access token belongs to has ended.')
    }
    const account = await directory.find(principal.id)
    if (!account) {
      return refuse(401, 'invalid_token', 'The account of this access token no longer exists.')
    }
    const all: Record<string, unknown> = accountClaims(account)
    const released = Object.entries(scopeClaims).flatMap(([scope, claims]) => (scopes.has(scope) ? claims : []))
    ctx.body = Object.fromEntries(released.map((claim) => [claim, all[claim]]))
  }
}
