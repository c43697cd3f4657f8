import { randomUUID } from 'node:crypto'
import { AppError, type TokenType, tokenTypes } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import { importJWK, errors as joseErrors, jwtVerify, SignJWT } from 'jose'
import type { KeyRing } from '../oauth/keys.js'
import { signingAlgorithm } from '../oauth/keys.js'

/** The scope on the cloud API that relays and devices are granted; a token without it does not open the API. */
export const apiScope = 'backups'

/** Who called: from a verified access token. */
export type Principal = {
  /** The user id for user tokens, the device client id for device tokens. */
  id: string
  type: TokenType
  /** The session (grant) a user token belongs to; absent for device and minted tokens. */
  sessionId: string | undefined
  /** What the token was issued for (its `scope` claim). */
  scopes: ReadonlySet<string>
  expiresAt: Date
}

export type TokenVerifierDeps = { keyRing: KeyRing; issuer: string; audience: string; clock: Clock }

/**
 * Verified tokens are remembered until they expire, so a client's repeated calls skip the
 * signature check (an ECDSA verify costs more than the rest of a small request).
 */
const defaultCacheSize = 10_000

/**
 * Checks an access token: signature against the local key set, an algorithm allow-list (so
 * neither `none` nor an HMAC made with the public key passes), `typ: at+jwt`, issuer,
 * audience, expiry, and the `type` claim.
 */
export function createTokenVerifier(
  { keyRing, issuer, audience, clock }: TokenVerifierDeps,
  { cacheSize = defaultCacheSize } = {},
) {
  const verified = new Map<string, Principal>()

  return async function verify(token: string): Promise<Principal> {
    const now = clock.now()
    const known = verified.get(token)
    if (known) {
      if (known.expiresAt > now) {
        return known
      }
      verified.delete(token)
    }
    let payload: Awaited<ReturnType<typeof jwtVerify>>['payload']
    try {
      ;({ payload } = await jwtVerify(token, keyRing.verificationKey, {
        issuer,
        audience,
        algorithms: [signingAlgorithm],
        typ: 'at+jwt',
        currentDate: now,
        requiredClaims: ['sub', 'exp', 'iat'],
      }))
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) {
        throw new AppError('UNAUTHORIZED', tokenProblem(err))
      }
      throw err
    }
    const { type, sub, exp, sid, scope } = payload
    if (!tokenTypes.includes(type as TokenType)) {
      throw new AppError('UNAUTHORIZED', 'Access token has no valid type claim')
    }
    const principal: Principal = {
      id: String(sub),
      type: type as TokenType,
      sessionId: typeof sid === 'string' ? sid : undefined,
      scopes: new Set(typeof scope === 'string' ? scope.split(' ') : []),
      expiresAt: new Date(Number(exp) * 1000),
    }
    if (cacheSize > 0) {
      for (const oldest of verified.keys()) {
        if (verified.size < cacheSize) {
          break
        }
        verified.delete(oldest)
      }
      verified.set(token, principal)
    }
    return principal
  }
}

export type TokenVerifier = ReturnType<typeof createTokenVerifier>

function tokenProblem(err: InstanceType<typeof joseErrors.JOSEError>): string {
  if (err instanceof joseErrors.JWTExpired) {
    return 'Access token has expired'
  }
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    return `Access token is not valid here (${err.claim})`
  }
  return 'Access token is invalid'
}

export type MintOptions = { subject: string; type: TokenType; lifetimeSeconds?: number }

/**
 * Signs an access token directly with the active key, with the same claims the authorization
 * server issues. For operators and tests (`npm run cloud -- tokens mint`), never an endpoint.
 */
export async function mintAccessToken(
  { keyRing, issuer, audience, clock }: TokenVerifierDeps,
  { subject, type, lifetimeSeconds = 15 * 60 }: MintOptions,
): Promise<{ token: string; expiresAt: Date }> {
  const [active] = (await keyRing.keys()).signing
  if (!active) {
    throw new Error('no signing key')
  }
  const now = Math.floor(clock.now().getTime() / 1000)
  const token = await new SignJWT({ type, scope: apiScope, client_id: 'cloud-cli' })
    .setProtectedHeader({ alg: signingAlgorithm, kid: active.kid, typ: 'at+jwt' })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject(subject)
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + lifetimeSeconds)
    .sign(await importJWK(active, signingAlgorithm))
  return { token, expiresAt: new Date((now + lifetimeSeconds) * 1000) }
}
