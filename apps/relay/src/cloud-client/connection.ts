import { createHash, randomBytes } from 'node:crypto'
import {
  AppError,
  authTimings,
  type CloudConnection,
  type CloudSession,
  cloudNotAuthenticatedMessage,
  type UserInfo,
} from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import type { NotificationService } from '../notifications/service.js'
import { CloudTokenRejected, createCloudApi } from './cloud-api.js'
import { createCloudOAuth, describeCloudError, type PendingLogin } from './oauth.js'
import { createSessionStore } from './session-store.js'
import { createTokenManager } from './token-manager.js'
import { createUserCache } from './user-cache.js'

/** How long a started cloud sign-in may take before its callback is refused. */
export const loginLifetime = 15 * 60 * 1000
const maxPendingLogins = 50

export type LoginRequest = {
  redirectUri: string
  returnTo: string
  /** Switch the relay to cloud mode when the sign-in succeeds. */
  switchToCloudMode: boolean
  /** The caller may use the relay already, so it may connect it to another cloud account. */
  mayReplaceAccount: boolean
}

type PendingEntry = LoginRequest & { pending: PendingLogin; expiresAt: number }

export type CloudCheck = {
  connection: CloudConnection | null
  backendAuthenticated: boolean
  userInfo: UserInfo | null
  error: string | null
}

export type CloudConnectionDeps = {
  cloudUrl: string
  backendId: string
  db: Kysely<RelayDB>
  secretKey: Buffer
  clock: Clock
  log: FastifyBaseLogger
  notifications: NotificationService
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url')

/**
 * The relay's link to the cloud: signing in, the stored session and its tokens, the cloud calls
 * made with them, and the 2-minute caches of what the UI reads through the relay.
 */
export function createCloudConnection(deps: CloudConnectionDeps) {
  const { cloudUrl, backendId, clock, log, notifications } = deps
  const oauth = createCloudOAuth({ cloudUrl, now: () => clock.now() })
  const api = createCloudApi({ cloudUrl })
  const store = createSessionStore({ db: deps.db, key: deps.secretKey, backendId })
  const cacheOptions = { ttlMs: authTimings.userInfoCache, clock }
  const userInfoCache = createUserCache<UserInfo>(cacheOptions)
  const sessionsCache = createUserCache<CloudSession[]>(cacheOptions)
  const tokenCache = createUserCache<UserInfo>(cacheOptions)
  const pendingLogins = new Map<string, PendingEntry>()

  function invalidate(userId: string) {
    userInfoCache.invalidateUser(userId)
    sessionsCache.invalidateUser(userId)
    tokenCache.invalidateUser(userId)
  }

  const tokens = createTokenManager({
    store,
    oauth,
    clock,
    log,
    async onSessionLost(userId) {
      invalidate(userId)
      await notifications.notify('cloudAuthenticationRequired', {
        message: 'The cloud ended the relay session; sign in to the cloud again to resume cloud backups',
      })
    },
  })

  function revokeQuietly(refreshToken: string) {
    oauth.revoke(refreshToken).catch((err: unknown) => {
      log.warn({ reason: describeCloudError(err) }, 'could not revoke a cloud refresh token')
    })
  }

  /** Runs a cloud call with the access token; a refused token is refreshed once and the call retried. */
  async function withToken<T>(call: (token: string) => Promise<T>): Promise<T> {
    const token = await tokens.requireAccessToken()
    try {
      return await call(token.token)
    } catch (err) {
      if (!(err instanceof CloudTokenRejected)) {
        throw err
      }
      const renewed = await tokens.forceRefresh()
      if (!renewed) {
        throw new AppError('CLOUD_NOT_AUTHENTICATED', cloudNotAuthenticatedMessage)
      }
      return call(renewed.token)
    }
  }

  function toConnection(session: { userId: string; createdAt: string }, info: UserInfo | null): CloudConnection {
    return {
      userId: session.userId,
      backendId,
      accessTokenExpiresAt: tokens.heldExpiry()?.toISOString() ?? null,
      email: info?.email ?? null,
      name: info?.name ?? null,
      connectedAt: session.createdAt,
      accountUrl: `${cloudUrl}/account`,
    }
  }

  return {
    tokens,
    oauth,

    /** Starts a sign-in: returns the cloud's authorization URL and the id the callback must bring back. */
    async startLogin(request: LoginRequest): Promise<{ loginId: string; url: URL }> {
      const now = clock.now().getTime()
      for (const [id, entry] of pendingLogins) {
        if (entry.expiresAt <= now || pendingLogins.size >= maxPendingLogins) {
          pendingLogins.delete(id)
        }
      }
      const { url, pending } = await oauth.startLogin(request.redirectUri)
      const loginId = randomBytes(32).toString('base64url')
      pendingLogins.set(loginId, { ...request, pending, expiresAt: now + loginLifetime })
      return { loginId, url }
    },

    /** The pending sign-in that `loginId` started, if `state` matches it; each one is usable once. */
    takeLogin(loginId: string | undefined, state: string | undefined): PendingEntry | undefined {
      const entry = loginId ? pendingLogins.get(loginId) : undefined
      if (!loginId || !entry) {
        return undefined
      }
      pendingLogins.delete(loginId)
      if (entry.expiresAt <= clock.now().getTime() || entry.pending.state !== state) {
        return undefined
      }
      return entry
    },

    /** Exchanges the callback's code and stores the session; returns the signed-in cloud user. */
    async finishLogin(entry: PendingEntry, search: string): Promise<{ userId: string; userInfo: UserInfo | null }> {
      const issued = await oauth.finishLogin(entry.pending, search)
      const current = await store.current()
      if (current && current.userId !== issued.userId && !entry.mayReplaceAccount) {
        revokeQuietly(issued.refreshToken)
        throw new AppError(
          'FORBIDDEN',
          'This relay is connected to another cloud account: sign in with that account, or disconnect it first',
        )
      }
      const replaced = await store.replace(issued.userId, issued.refreshToken, clock.now())
      tokens.adopt(issued)
      for (const session of replaced) {
        invalidate(session.userId)
        revokeQuietly(session.refreshToken)
      }
      invalidate(issued.userId)
      let userInfo: UserInfo | null = null
      try {
        userInfo = await api.userInfo(issued.accessToken)
        userInfoCache.set(userInfo.userId, userInfo.userId, userInfo)
      } catch (err) {
        log.warn({ reason: describeCloudError(err) }, 'signed in, but the cloud user info could not be read')
      }
      log.info({ userId: issued.userId }, 'relay signed in to the cloud')
      return { userId: issued.userId, userInfo }
    },

    /**
     * Ends the cloud session: local credentials are forgotten first, so an unreachable cloud cannot keep
     * them. Then the refresh token is revoked (RFC 7009): the cloud ends the grant with every token issued
     * under it, and the browser sign-in that made it. The relay is a back-end client, so revocation is
     * its sign-out; the end-session endpoint is for a browser that is at the cloud.
     */
    async disconnect(): Promise<{ userId: string } | null> {
      const session = await store.current()
      tokens.clear()
      await store.remove()
      if (!session) {
        return null
      }
      invalidate(session.userId)
      try {
        await oauth.revoke(session.refreshToken)
      } catch (err) {
        log.warn({ reason: describeCloudError(err) }, 'cloud session forgotten locally, but not revoked at the cloud')
      }
      return { userId: session.userId }
    },

    /** The relay's cloud state, from a fresh user-info call (never from a cache). */
    async check(): Promise<CloudCheck> {
      const session = await store.current()
      if (!session) {
        return { connection: null, backendAuthenticated: false, userInfo: null, error: null }
      }
      try {
        const userInfo = await withToken((token) => api.userInfo(token))
        userInfoCache.set(userInfo.userId, userInfo.userId, userInfo)
        return { connection: toConnection(session, userInfo), backendAuthenticated: true, userInfo, error: null }
      } catch (err) {
        const stillStored = await store.current()
        return {
          connection: stillStored ? toConnection(stillStored, null) : null,
          backendAuthenticated: false,
          userInfo: null,
          error: err instanceof AppError ? err.message : describeCloudError(err),
        }
      }
    },

    /** A call of the cloud API with the relay's access token (401 `CLOUD_NOT_AUTHENTICATED` without one). */
    request<T>(method: string, path: string, body?: unknown): Promise<T> {
      return withToken((token) => api.request<T>(token, method, path, body))
    },

    /** The cloud user info for the UI, cached 2 minutes per user id. */
    async userInfo(): Promise<UserInfo> {
      const { userId } = await tokens.requireAccessToken()
      const cached = userInfoCache.get(userId)
      if (cached) {
        return cached
      }
      const info = await withToken((token) => api.userInfo(token))
      userInfoCache.set(info.userId, info.userId, info)
      return info
    },

    /** The cloud account's signed-in relays, cached 2 minutes per user id. */
    async sessions(): Promise<CloudSession[]> {
      const { userId } = await tokens.requireAccessToken()
      const cached = sessionsCache.get(userId)
      if (cached) {
        return cached
      }
      const sessions = await withToken((token) => api.sessions(token))
      sessionsCache.set(userId, userId, sessions)
      return sessions
    },

    async deleteSession(id: string): Promise<void> {
      const { userId } = await tokens.requireAccessToken()
      await withToken((token) => api.deleteSession(token, id))
      sessionsCache.invalidateUser(userId)
    },

    /**
     * The cloud user a bearer token belongs to, when it is a valid token of the user this relay is
     * signed in as; validations are cached 2 minutes by the token's hash.
     */
    async validateBearer(token: string): Promise<UserInfo | null> {
      const owner = await store.current()
      if (!owner) {
        return null
      }
      const key = sha256(token)
      let info = tokenCache.get(key)
      if (!info) {
        try {
          info = await api.userInfo(token)
        } catch (err) {
          if (err instanceof CloudTokenRejected) {
            return null
          }
          throw err
        }
        tokenCache.set(key, info.userId, info)
      }
      return info.userId === owner.userId ? info : null
    },

    /** Test and status helper: whether a session is stored, without asking the cloud. */
    async storedSession() {
      const session = await store.current()
      return session ? { userId: session.userId, createdAt: session.createdAt } : null
    },

    /** The stored sessions as they are now, for a restore to carry into the database it brings in. */
    holdSessions: () => store.hold(),
  }
}

export type CloudConnectionService = ReturnType<typeof createCloudConnection>
