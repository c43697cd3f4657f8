import { AppError, type CloudSession, type UserInfo } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { CloudDB } from '../db/schema.js'
import type { IdentityDirectory } from '../directory/directory.js'
import type { LicenseService } from '../licenses/service.js'
import { hashedId } from '../oauth/adapter.js'
import { listGrants, revokeAllGrants, revokeGrant } from './repo.js'
import type { Principal } from './tokens.js'

/**
 * The id a session is listed and revoked by: its grant's id as stored, hashed. Access tokens carry
 * the grant id itself (`sid`), so the session a token belongs to is found through this.
 */
export function sessionIdOf(grantId: string): string {
  return hashedId(grantId)
}

export type AccountDeps = {
  db: Kysely<CloudDB>
  directory: IdentityDirectory
  checkLicense: LicenseService['check']
  clock: Clock
}

/** The signed-in user's account: who they are, their license, and their relay sessions (OAuth grants). */
export function createAccountService({ db, directory, checkLicense, clock }: AccountDeps) {
  return {
    async userInfo(principal: Principal): Promise<UserInfo> {
      const account = await directory.find(principal.id)
      if (!account) {
        throw new AppError('UNAUTHORIZED', 'The account of this token no longer exists')
      }
      const license = await checkLicense(account.id)
      return {
        userId: account.id,
        email: account.email,
        name: account.name,
        hasValidLicense: license.valid,
        licenseSource: license.source,
      }
    },

    /** The user's live sessions, newest first; the one the calling token belongs to is marked. */
    async listSessions(principal: Pick<Principal, 'id' | 'sessionId'>): Promise<CloudSession[]> {
      const rows = await listGrants(db, principal.id, clock.now())
      const current = principal.sessionId === undefined ? undefined : sessionIdOf(principal.sessionId)
      const sessions = rows.map((row) => ({
        id: row.id,
        clientId: String(row.payload.clientId),
        createdAt: new Date(Number(row.payload.iat) * 1000).toISOString(),
        expiresAt: row.expires_at?.toISOString() ?? null,
        current: row.id === current,
      }))
      return sessions.sort((a, b) => b.createdAt.localeCompare(a.createdAt))
    },

    /** Ends one of the user's sessions, by the id `listSessions` gives, with every token issued under it. */
    async revokeSession(accountId: string, sessionId: string): Promise<void> {
      if (!(await revokeGrant(db, accountId, sessionId))) {
        throw new AppError('NOT_FOUND', 'No such session')
      }
    },

    /**
     * Ends every session of the account (after a password reset or change, or before deletion): each
     * relay's grant with its refresh tokens, and the account's browser sign-in at the authorization
     * server. Access tokens already issued run out within their 15 minutes. Returns how many grants ended.
     */
    async revokeAllSessions(accountId: string): Promise<number> {
      return revokeAllGrants(db, accountId)
    },

    /** Ends the session the calling token belongs to. */
    async logout(principal: Principal): Promise<void> {
      if (!principal.sessionId) {
        throw new AppError('CONFLICT', 'This token does not belong to a session')
      }
      await revokeGrant(db, principal.id, sessionIdOf(principal.sessionId))
    },
  }
}

export type AccountService = ReturnType<typeof createAccountService>
