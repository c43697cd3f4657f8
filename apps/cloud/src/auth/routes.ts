import { deleteSessionRoute, listSessionsRoute, logoutRoute, userInfoRoute } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { AccountService } from './service.js'

/** The signed-in user's account: who they are, their license, their relay sessions. User tokens only. */
export async function accountRoutes(app: HttpServer, { account }: { account: AccountService }) {
  app.route({ ...userInfoRoute, handler: (request) => account.userInfo(request.principal) })

  app.route({
    ...listSessionsRoute,
    handler: async (request) => ({ success: true as const, sessions: await account.listSessions(request.principal) }),
  })

  app.route({
    ...deleteSessionRoute,
    async handler(request) {
      await account.revokeSession(request.principal.id, request.params.id)
      return { success: true as const }
    },
  })

  app.route({
    ...logoutRoute,
    async handler(request) {
      await account.logout(request.principal)
      return { success: true as const }
    },
  })
}
