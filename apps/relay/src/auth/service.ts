import {
  AppError,
  type AuthMode,
  type AuthStatus,
  cloudNotAuthenticatedMessage,
  type ForceRefreshReply,
  type SessionUser,
} from '@relay/contracts'
import type { FastifyBaseLogger } from 'fastify'
import type { CloudConnectionService } from '../cloud-client/connection.js'
import type { HeldRows } from '../db/database.js'
import type { NotificationService } from '../notifications/service.js'
import type { AuthSettingsStore } from './auth-settings.js'
import type { FrontendSessions } from './frontend-sessions.js'
import type { RequestAuth } from './guard.js'
import type { LocalUsers } from './local-users.js'

export type AuthDeps = {
  settings: AuthSettingsStore
  localUsers: LocalUsers
  sessions: FrontendSessions
  cloud: CloudConnectionService
  notifications: NotificationService
  log: FastifyBaseLogger
  /** Mode none leaves the API open: only allowed while the relay listens on loopback (or when told). */
  openModeAllowed: boolean
}

/** The relay's sign-in rules: modes, local accounts, frontend sessions, and the cloud sign-in's outcome. */
export function createAuthService({
  settings,
  localUsers,
  sessions,
  cloud,
  notifications,
  log,
  openModeAllowed,
}: AuthDeps) {
  async function signIn(user: SessionUser, how: string): Promise<string> {
    const token = await sessions.create(user)
    await notifications.notify('userLogin', { message: `${user.name} signed in${how}` })
    log.info({ userKind: user.kind, userId: user.id }, 'signed in')
    return token
  }

  return {
    mode: (): AuthMode => settings.get().mode,

    async status(auth: RequestAuth): Promise<AuthStatus> {
      const { mode, setupComplete } = settings.get()
      const isAuthenticated = mode === 'none' || auth.user !== null
      const check = await cloud.check()
      return {
        mode,
        setupRequired: !setupComplete,
        hasLocalUsers: await localUsers.exist(),
        isAuthenticated,
        backendAuthenticated: check.backendAuthenticated,
        user: auth.user,
        // Who the relay acts for in the cloud is shown to signed-in callers only.
        cloud: isAuthenticated ? check.connection : null,
        hasValidLicense: isAuthenticated ? (check.userInfo?.hasValidLicense ?? null) : null,
        cloudError: isAuthenticated ? check.error : null,
      }
    },

    async setMode(mode: AuthMode): Promise<void> {
      if (mode === 'local' && !(await localUsers.exist())) {
        throw new AppError('CONFLICT', 'Create a local account first: local mode needs one to sign in with')
      }
      if (mode === 'cloud' && !(await cloud.storedSession())) {
        throw new AppError('CONFLICT', 'Connect the relay to the cloud first: cloud mode signs in with that account')
      }
      if (mode === 'none' && !openModeAllowed) {
        throw new AppError(
          'CONFLICT',
          'The relay listens on a network address: without sign-in anybody on the network could use it',
        )
      }
      await settings.save(mode)
      log.info({ mode }, 'auth mode changed')
    },

    /** Creates the first local account, switches to local mode and signs the caller in. */
    async setupLocal(username: string, password: string): Promise<{ user: SessionUser; token: string }> {
      const user = await localUsers.createFirst(username, password)
      await settings.save('local')
      return { user, token: await signIn(user, '') }
    },

    async loginLocal(
      username: string,
      password: string,
      address: string,
    ): Promise<{ user: SessionUser; token: string }> {
      if (settings.get().mode !== 'local') {
        throw new AppError('CONFLICT', 'Local sign-in is off: the relay is not in local mode')
      }
      try {
        const user = await localUsers.verify(username, password, address)
        return { user, token: await signIn(user, '') }
      } catch (err) {
        if (err instanceof AppError && err.code === 'UNAUTHORIZED') {
          await notifications.notify('authenticationFailure', { message: `Sign-in failed for ${username}` })
        }
        throw err
      }
    },

    async logout(auth: RequestAuth): Promise<void> {
      if (!auth.sessionToken) {
        return
      }
      await sessions.end(auth.sessionToken)
      if (auth.user) {
        await notifications.notify('userLogout', { message: `${auth.user.name} signed out` })
      }
    },

    /**
     * After a cloud sign-in: the setup screen's choice of cloud mode, and in cloud mode a frontend
     * session for the cloud user. Returns its token, if one was made.
     */
    async cloudSignedIn(
      result: Awaited<ReturnType<CloudConnectionService['finishLogin']>>,
      switchToCloudMode: boolean,
    ): Promise<string | null> {
      if (switchToCloudMode) {
        await settings.save('cloud')
      }
      const { userId, userInfo } = result
      const name = userInfo?.name || userInfo?.email || userId
      if (settings.get().mode === 'cloud') {
        return signIn({ kind: 'cloud', id: userId, name, email: userInfo?.email ?? null }, ' with the cloud')
      }
      await notifications.notify('userLogin', { message: `The relay is connected to the cloud as ${name}` })
      return null
    },

    async disconnectCloud(): Promise<void> {
      const ended = await cloud.disconnect()
      if (ended) {
        await notifications.notify('userLogout', { message: 'The relay is disconnected from the cloud' })
      }
    },

    /**
     * Who is signed in now, here and at the cloud, for a restore to put into the database it brings in:
     * the cloud session holds the only refresh token the cloud still accepts (an older one from the
     * backup would be a reuse and end the session), and the browser that asked for the restore stays
     * signed in.
     */
    async holdSignIns(): Promise<HeldRows> {
      const held = [await cloud.holdSessions(), await sessions.hold()]
      return {
        async putBack(trx) {
          for (const rows of held) {
            await rows.putBack(trx)
          }
        },
      }
    },

    async forceRefresh(): Promise<ForceRefreshReply> {
      if (!(await cloud.storedSession())) {
        throw new AppError('CLOUD_NOT_AUTHENTICATED', cloudNotAuthenticatedMessage)
      }
      try {
        const token = await cloud.tokens.forceRefresh()
        if (!token) {
          return {
            success: false,
            message: 'The cloud refused the stored credentials; sign in to the cloud again',
            accessTokenExpiresAt: null,
          }
        }
        return { success: true, message: 'Access token refreshed', accessTokenExpiresAt: token.expiresAt.toISOString() }
      } catch (err) {
        return {
          success: false,
          message: err instanceof Error ? err.message : String(err),
          accessTokenExpiresAt: cloud.tokens.heldExpiry()?.toISOString() ?? null,
        }
      }
    },
  }
}

export type AuthService = ReturnType<typeof createAuthService>
