import { authTimings, relayClientId } from '@relay/contracts'
import type { Kysely } from 'kysely'
import Provider, { type Client, type ClientMetadata, errors, type KoaContextWithOIDC } from 'oidc-provider'
import { apiScope, type TokenVerifier } from '../auth/tokens.js'
import type { CloudDB } from '../db/schema.js'
import type { IdentityDirectory } from '../directory/directory.js'
import { messagePage } from '../pages/layout.js'
import { kyselyAdapter } from './adapter.js'
import type { KeySet } from './keys.js'
import { signingAlgorithm } from './keys.js'
import { endBrowserSignInOnRevocation, renderPage, signedOutPage, signOutPage } from './sign-out.js'
import { accountClaims, scopeClaims, userinfoEndpoint, userinfoPath } from './userinfo.js'

/** Where the authorization server lives under the cloud's address; the issuer ends with it. */
export const oauthPrefix = '/oauth'
/** The OpenID scopes a user's sign-in grants, beside the API scope. */
const openidScopes = ['openid', 'offline_access', ...Object.keys(scopeClaims).filter((scope) => scope !== 'openid')]
/**
 * What a user's access token can be issued for: it is one token, a JWT for the cloud API that the
 * UserInfo endpoint accepts too, so its `scope` (and the token response's) names the OpenID scopes
 * granted beside the API's. Devices (client credentials) have no user: the API scope only.
 */
const userTokenScope = [...openidScopes, apiScope].join(' ')

const seconds = (ms: number) => Math.floor(ms / 1000)
const day = 24 * 60 * 60

/** Relays are native apps: a public client with PKCE, redirecting to their own loopback address on any port (RFC 8252). */
const relayClient: ClientMetadata = {
  client_id: relayClientId,
  client_name: 'Relay',
  application_type: 'native',
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  redirect_uris: [
    'http://127.0.0.1/api/unified-auth/cloud/callback',
    'http://localhost/api/unified-auth/cloud/callback',
    'http://[::1]/api/unified-auth/cloud/callback',
  ],
  // Where the end-session endpoint may send the browser back to: the relay's account settings.
  post_logout_redirect_uris: [
    'http://127.0.0.1/settings/account',
    'http://localhost/settings/account',
    'http://[::1]/settings/account',
  ],
  id_token_signed_response_alg: signingAlgorithm,
}

export type ProviderDeps = {
  issuer: string
  /** The cloud API's resource identifier: the `aud` of every access token. */
  audience: string
  db: Kysely<CloudDB>
  directory: IdentityDirectory
  keys: KeySet
  /** Checks the cloud's access tokens as the API does; the UserInfo endpoint uses it. */
  verifyAccessToken: TokenVerifier
}

/** The OAuth 2.0 authorization server: oidc-provider configured for relays and device clients. */
export function createProvider({ issuer, audience, db, directory, keys, verifyAccessToken }: ProviderDeps): Provider {
  const provider = new Provider(issuer, {
    adapter: kyselyAdapter(db),
    clients: [relayClient],
    jwks: { keys: keys.signing as never },
    cookies: {
      keys: keys.cookieSecrets,
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    async findAccount(_ctx, sub) {
      const account = await directory.find(sub)
      return account && { accountId: account.id, claims: () => accountClaims(account) }
    },
    claims: Object.fromEntries(Object.entries(scopeClaims).map(([scope, claims]) => [scope, [...claims]])),
    scopes: ['openid', 'offline_access'],
    // The UserInfo endpoint is the cloud's own (see userinfo.ts); discovery names it all the same.
    discovery: { userinfo_endpoint: `${issuer}${userinfoPath}` },
    responseTypes: ['code'],
    clientDefaults: {
      id_token_signed_response_alg: signingAlgorithm,
      grant_types: ['authorization_code'],
      response_types: ['code'],
    },
    enabledJWA: { clientAuthSigningAlgValues: ['ES256', 'EdDSA', 'RS256', 'PS256'] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: signOutPage,
        postLogoutSuccessSource: signedOutPage,
      },
      revocation: {
        enabled: true,
        // A client revokes only its own tokens; a public client asking for another's gets a silent no-op (RFC 7009).
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, resource, client) {
          if (resource !== audience) {
            throw new errors.InvalidTarget()
          }
          return {
            scope: hasUsers(client) ? userTokenScope : apiScope,
            audience,
            accessTokenTTL: seconds(authTimings.accessTokenLifetime),
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: signingAlgorithm } },
          }
        },
      },
    },
    ttl: {
      AccessToken: seconds(authTimings.accessTokenLifetime),
      ClientCredentials: seconds(authTimings.accessTokenLifetime),
      AuthorizationCode: 60,
      IdToken: 60 * 60,
      Interaction: 30 * 60,
      Session: 14 * day,
      // Each use rotates the refresh token and starts its 30 days again; the grant bounds the whole chain.
      RefreshToken: seconds(authTimings.refreshTokenLifetime),
      Grant: 365 * day,
    },
    rotateRefreshToken: true,
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // `type` tells user tokens from device tokens; `sid` names the session (grant) a user token belongs to.
    extraTokenClaims(_ctx, token) {
      if (token.kind === 'ClientCredentials') {
        return { type: 'device' }
      }
      return { type: 'user', ...('grantId' in token && token.grantId ? { sid: token.grantId } : {}) }
    },
    // Every sign-in makes a grant of its own (see the consent step of the sign-in routes), so
    // each relay is a separate session that can be listed and revoked on its own.
    loadExistingGrant: (ctx: KoaContextWithOIDC) => {
      const grantId = ctx.oidc.result?.consent?.grantId
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    renderError(ctx, out) {
      const title = ctx.oidc?.route?.startsWith('end_session') ? 'Sign-out failed' : 'Sign-in failed'
      renderPage(ctx, messagePage(title, out.error_description ?? out.error ?? 'The request could not be completed.'))
    },
  })
  provider.use(pinOrigin(new URL(issuer).origin))
  provider.use(userinfoEndpoint({ issuer, verify: verifyAccessToken, directory, provider }))
  provider.use(publishApiScope)
  provider.use(endBrowserSignInOnRevocation(db))
  offlineAccessAsksConsent(provider)
  return provider
}

/** Clients a user signs in to (authorization code), as opposed to devices. */
const hasUsers = (client: Client) => client.grantTypeAllowed('authorization_code')

/** Discovery lists the OpenID scopes only; the API's scope is requested the same way, so it is listed too. */
const publishApiScope: Parameters<Provider['use']>[0] = async (ctx, next) => {
  await next()
  const body = ctx.body as { scopes_supported?: string[] } | undefined
  if (ctx.oidc?.route === 'discovery' && Array.isArray(body?.scopes_supported)) {
    body.scopes_supported = [...new Set([...body.scopes_supported, apiScope])]
  }
}

/** The routes where oidc-provider reads an authorization request's scope and prompt. */
const authorizationRequestRoutes = new Set(['authorization', 'pushed_authorization_request'])

/**
 * OpenID Connect Core §11 keeps `offline_access` only when the request also says `prompt=consent`,
 * "unless other conditions for processing the request permitting offline access ... are in place".
 * They are here: every sign-in through the cloud's pages ends in a grant made for it (see
 * `loadExistingGrant`), and oidc-provider asks native clients' users every time. So a request for
 * `offline_access` counts as one asking for consent, and the grant, the refresh token and the token
 * response carry the scope. Without this oidc-provider drops the scope, while relays still get
 * their refresh token, and a client that resends its original scope on refresh is refused.
 */
function offlineAccessAsksConsent(provider: Provider): void {
  const { prototype } = provider.OIDCContext
  const prompts = Object.getOwnPropertyDescriptor(prototype, 'prompts')?.get
  if (!prompts) {
    throw new Error('oidc-provider no longer has OIDCContext#prompts: review offlineAccessAsksConsent')
  }
  Object.defineProperty(prototype, 'prompts', {
    configurable: true,
    get(this: InstanceType<Provider['OIDCContext']>) {
      const requested: Set<string> = prompts.call(this)
      const scope = this.params?.scope
      if (
        authorizationRequestRoutes.has(this.route) &&
        !requested.has('none') &&
        typeof scope === 'string' &&
        scope.split(' ').includes('offline_access')
      ) {
        requested.add('consent')
      }
      return requested
    },
  })
}

/**
 * oidc-provider builds the URLs it publishes (discovery, redirects, the audience client assertions
 * must name) from the request's Host and protocol. A forged Host header, or a proxy passing one on,
 * would make it advertise another site's endpoints, so every request gets the configured public
 * origin instead, before the provider's own middleware runs. Forwarded headers are never trusted.
 */
function pinOrigin(publicOrigin: string): Parameters<Provider['use']>[0] {
  const { protocol, host, hostname, origin } = new URL(publicOrigin)
  const fixed = { protocol: protocol.slice(0, -1), host, hostname, origin, secure: protocol === 'https:' }
  const pathOnly = (target: string) => {
    const url = new URL(target, origin)
    return `${url.pathname}${url.search}`
  }
  return async (ctx, next) => {
    const { request } = ctx
    for (const [name, value] of Object.entries(fixed)) {
      Object.defineProperty(request, name, { value })
    }
    // An absolute request target (`GET http://elsewhere/oauth/...`) would come back as the href, and
    // through the mount path the provider derives from the full URL: keep only its path.
    Object.defineProperty(request, 'href', { value: `${origin}${pathOnly(request.originalUrl)}` })
    const req = ctx.req as typeof ctx.req & { originalUrl?: string }
    if (req.originalUrl !== undefined) {
      req.originalUrl = pathOnly(req.originalUrl)
    }
    await next()
  }
}

/** Creates the grant a first-party client gets without a consent screen. */
export async function grantFirstParty(
  provider: Provider,
  accountId: string,
  clientId: string,
  audience: string,
): Promise<string> {
  const grant = new provider.Grant({ accountId, clientId })
  grant.addOIDCScope(openidScopes.join(' '))
  grant.addResourceScope(audience, userTokenScope)
  return grant.save()
}
