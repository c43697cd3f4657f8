import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type Provider from 'oidc-provider'
import { createTokenVerifier } from '../auth/tokens.js'
import type { CloudDB } from '../db/schema.js'
import type { IdentityDirectory } from '../directory/directory.js'
import type { KeyRing } from './keys.js'
import { createProvider } from './provider.js'

export type OAuthServerDeps = {
  issuer: string
  audience: string
  db: Kysely<CloudDB>
  directory: IdentityDirectory
  keyRing: KeyRing
  clock: Clock
}

/**
 * Holds the authorization server. When the key ring changes (a rotation here, on another
 * instance or from the CLI), the next request gets a provider built on the new keys; all
 * state lives in the database, so nothing in flight is lost.
 */
export function createOAuthServer(deps: OAuthServerDeps) {
  let built: { version: string; provider: Provider; handle: ReturnType<Provider['callback']> } | undefined
  // Outlives the providers: it reads the key ring itself, and keeps its cache of verified tokens.
  const verifyAccessToken = createTokenVerifier(deps)

  async function current() {
    const keys = await deps.keyRing.keys()
    if (built?.version !== keys.version) {
      const provider = createProvider({ ...deps, keys, verifyAccessToken })
      built = { version: keys.version, provider, handle: provider.callback() }
    }
    return built
  }

  return {
    issuer: deps.issuer,
    audience: deps.audience,
    async provider(): Promise<Provider> {
      return (await current()).provider
    },
    /** The Node request handler of the provider's endpoints. */
    async handle(...args: Parameters<ReturnType<Provider['callback']>>): Promise<void> {
      await (await current()).handle(...args)
    },
  }
}

export type OAuthServer = ReturnType<typeof createOAuthServer>
