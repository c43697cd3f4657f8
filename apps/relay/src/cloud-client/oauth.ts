import { relayClientId, relayScope } from '@relay/contracts'
import { decodeJwt } from 'jose'
import * as client from 'openid-client'

/** Seconds the relay waits for any answer of the cloud's authorization server. */
const requestTimeoutSeconds = 10

/** What the relay keeps between sending the browser to the cloud and the browser coming back. */
export type PendingLogin = { redirectUri: string; verifier: string; state: string; nonce: string }

export type IssuedTokens = {
  accessToken: string
  refreshToken: string
  /** The cloud user id: the access token's `sub`. */
  userId: string
  expiresAt: Date
}

/**
 * The relay as an OAuth client of the cloud: a public client (`relay`) using the authorization
 * code flow with PKCE, state and nonce, and a loopback redirect (RFC 8252). Every sign-in asks
 * for the cloud password (`prompt=login`).
 */
export function createCloudOAuth({ cloudUrl, now }: { cloudUrl: string; now: () => Date }) {
  let configuration: Promise<client.Configuration> | undefined

  /** Discovered once; a failed discovery is retried on the next call instead of being remembered. */
  function config(): Promise<client.Configuration> {
    configuration ??= client
      .discovery(new URL(`${cloudUrl}/oauth`), relayClientId, undefined, client.None(), {
        timeout: requestTimeoutSeconds,
        execute: cloudUrl.startsWith('http:') ? [client.allowInsecureRequests] : [],
      })
      .catch((err: unknown) => {
        configuration = undefined
        throw err
      })
    return configuration
  }

  function toIssued(tokens: client.TokenEndpointResponse): IssuedTokens {
    const userId = decodeJwt(tokens.access_token).sub
    if (!userId || !tokens.refresh_token) {
      throw new Error('the cloud answered without a user id or a refresh token')
    }
    const lifetime = (tokens.expires_in ?? 0) * 1000
    return {
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
      userId,
      expiresAt: new Date(now().getTime() + lifetime),
    }
  }

  return {
    async startLogin(redirectUri: string): Promise<{ url: URL; pending: PendingLogin }> {
      const verifier = client.randomPKCECodeVerifier()
      const pending = { redirectUri, verifier, state: client.randomState(), nonce: client.randomNonce() }
      const url = client.buildAuthorizationUrl(await config(), {
        redirect_uri: redirectUri,
        scope: relayScope,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: pending.state,
        nonce: pending.nonce,
        // Asked even when the browser still holds a cloud session: the relay cannot tell whose session
        // that is, and after a sign-out or a disconnect the next person at a shared computer must pick
        // their own account instead of being signed straight back in as the last one.
        prompt: 'login',
      })
      return { url, pending }
    },

    /** Exchanges the code of the callback; `search` is the callback's query string. */
    async finishLogin(pending: PendingLogin, search: string): Promise<IssuedTokens> {
      const currentUrl = new URL(pending.redirectUri)
      currentUrl.search = search
      const tokens = await client.authorizationCodeGrant(await config(), currentUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      })
      return toIssued(tokens)
    },

    async refresh(refreshToken: string): Promise<IssuedTokens> {
      return toIssued(await client.refreshTokenGrant(await config(), refreshToken))
    },

    async revoke(refreshToken: string): Promise<void> {
      await client.tokenRevocation(await config(), refreshToken, { token_type_hint: 'refresh_token' })
    },
  }
}

export type CloudOAuth = ReturnType<typeof createCloudOAuth>

/** The cloud refused the grant for good (revoked, rotated away, expired): only a new sign-in helps. */
export function isGrantRejected(err: unknown): boolean {
  return err instanceof client.ResponseBodyError && err.error === 'invalid_grant'
}

/** As `describeCloudError`, as a sentence of its own. */
export function cloudErrorSentence(err: unknown): string {
  const text = describeCloudError(err)
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** A message for logs and replies that never carries a token. */
export function describeCloudError(err: unknown): string {
  if (err instanceof client.ResponseBodyError) {
    return `the cloud answered ${err.status} ${err.error}${err.error_description ? `: ${err.error_description}` : ''}`
  }
  if (err instanceof client.AuthorizationResponseError) {
    return `the cloud refused the sign-in: ${err.error}`
  }
  const cause = (err as { cause?: { code?: string } })?.cause?.code
  if (cause) {
    return `the cloud is unreachable (${cause})`
  }
  if (err instanceof Error && err.name === 'TimeoutError') {
    return 'the cloud did not answer in time'
  }
  return err instanceof Error ? err.message : String(err)
}
