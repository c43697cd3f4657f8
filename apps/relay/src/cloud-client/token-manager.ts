import { AppError, authTimings, cloudNotAuthenticatedMessage } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import { type CloudOAuth, describeCloudError, type IssuedTokens, isGrantRejected } from './oauth.js'
import type { SessionStore } from './session-store.js'

export type AccessToken = { token: string; userId: string; expiresAt: Date }

export type TokenManagerDeps = {
  store: SessionStore
  oauth: CloudOAuth
  clock: Clock
  log: FastifyBaseLogger
  /** Called once the cloud has refused the stored refresh token for good and the session is gone. */
  onSessionLost(userId: string): Promise<unknown>
}

/**
 * Hands out the cloud access token. The token lives in memory only; the refresh token is read from
 * the session store. One refresh runs at a time for every caller, and a rotated refresh token is
 * saved before the new access token is handed to anybody, so a crash never leaves the relay holding
 * a refresh token the cloud has already replaced (whose reuse would end the whole session).
 */
export function createTokenManager({ store, oauth, clock, log, onSessionLost }: TokenManagerDeps) {
  let held: AccessToken | undefined
  let refreshing: Promise<AccessToken | null> | undefined

  const isFresh = (token: AccessToken | undefined): token is AccessToken =>
    token !== undefined && token.expiresAt.getTime() - clock.now().getTime() > authTimings.refreshMargin

  async function refreshOnce(): Promise<AccessToken | null> {
    const session = await store.current()
    if (!session) {
      held = undefined
      return null
    }
    let issued: IssuedTokens
    try {
      issued = await oauth.refresh(session.refreshToken)
    } catch (err) {
      if (isGrantRejected(err)) {
        held = undefined
        await store.remove(session)
        log.warn({ userId: session.userId, reason: describeCloudError(err) }, 'the cloud ended the relay session')
        await onSessionLost(session.userId)
        return null
      }
      throw new AppError('UNAVAILABLE', `Could not refresh the cloud access token: ${describeCloudError(err)}`, {
        cause: err,
      })
    }
    if (!(await store.rotate(session, issued.refreshToken, clock.now()))) {
      // A sign-in or sign-out replaced the session while this refresh was under way: this chain is
      // orphaned. Revoke it and answer with whatever the newer state holds.
      oauth.revoke(issued.refreshToken).catch(() => {})
      return isFresh(held) ? held : null
    }
    held = { token: issued.accessToken, userId: issued.userId, expiresAt: issued.expiresAt }
    log.info({ userId: issued.userId, expiresAt: issued.expiresAt }, 'cloud access token refreshed')
    return held
  }

  function refresh(): Promise<AccessToken | null> {
    refreshing ??= refreshOnce().finally(() => {
      refreshing = undefined
    })
    return refreshing
  }

  return {
    /**
     * The access token, refreshed first when it expires within 5 minutes. Null when the relay
     * holds no cloud session; an `UNAVAILABLE` error when the cloud could not be asked.
     */
    async getAccessToken(): Promise<AccessToken | null> {
      return isFresh(held) ? held : refresh()
    },

    /** Like `getAccessToken`, for callers that cannot go on without one: 401 when there is none. */
    async requireAccessToken(): Promise<AccessToken> {
      const token = await this.getAccessToken()
      if (!token) {
        throw new AppError('CLOUD_NOT_AUTHENTICATED', cloudNotAuthenticatedMessage)
      }
      return token
    },

    /** Drops the access token in hand (the refresh token stays) and refreshes now. */
    async forceRefresh(): Promise<AccessToken | null> {
      held = undefined
      // A refresh already under way was asked for the same thing: wait for it, then make a new one.
      await refreshing?.catch(() => {})
      return refresh()
    },

    /** The access token of a sign-in that just happened; its refresh token is already stored. */
    adopt(issued: IssuedTokens): void {
      held = { token: issued.accessToken, userId: issued.userId, expiresAt: issued.expiresAt }
    },

    /** Forgets the access token (the session was removed). */
    clear(): void {
      held = undefined
    },

    /** When the access token in hand expires, without asking the cloud. */
    heldExpiry(): Date | null {
      return held?.expiresAt ?? null
    },
  }
}

export type TokenManager = ReturnType<typeof createTokenManager>
