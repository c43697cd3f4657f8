import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AppError,
  type CloudSession,
  deleteSessionRoute,
  listSessionsRoute,
  logoutRoute,
  userInfoRoute,
} from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { CloudDB } from '../db/schema.js'
import type { IdentityDirectory } from '../directory/directory.js'
import type { LicenseService } from '../licenses/service.js'
import { listGrants, revokeGrant, sessionIdOf } from './repo.js'

export type AccountRoutesOptions = {
  db: Kysely<CloudDB>
  directory: IdentityDirectory
  checkLicense: LicenseService['check']
  clock: Clock
}

/** The signed-in user's account: who they are, their license, their relay sessions. User tokens only. */
export const accountRoutes: FastifyPluginAsyncTypebox<AccountRoutesOptions> = async (
  app,
  { db, directory, checkLicense, clock },
) => {
  app.route({
    ...userInfoRoute,
    async handler(request) {
      const account = await directory.find(request.principal.id)
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
  })

  app.route({
    ...listSessionsRoute,
    async handler(request) {
      const rows = await listGrants(db, request.principal.id, clock.now())
      const sessions: CloudSession[] = rows.map((row) => ({
        id: row.id,
        clientId: String(row.payload.clientId),
        createdAt: new Date(Number(row.payload.iat) * 1000).toISOString(),
        expiresAt: row.expires_at?.toISOString() ?? null,
        current: request.principal.sessionId !== undefined && row.id === sessionIdOf(request.principal.sessionId),
      }))
      sessions.sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      return { success: true as const, sessions }
    },
  })

  app.route({
    ...deleteSessionRoute,
    async handler(request) {
      if (!(await revokeGrant(db, request.principal.id, request.params.id))) {
        throw new AppError('NOT_FOUND', 'No such session')
      }
      return { success: true as const }
    },
  })

  app.route({
    ...logoutRoute,
    async handler(request) {
      const { sessionId } = request.principal
      if (!sessionId) {
        throw new AppError('CONFLICT', 'This token does not belong to a session')
      }
      await revokeGrant(db, request.principal.id, sessionIdOf(sessionId))
      return { success: true as const }
    },
  })
}
