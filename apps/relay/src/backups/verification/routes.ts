import { backupVerificationRoutes as routes } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { BackupVerification } from './service.js'

/** Verifying cloud backups: on demand, and how often the scheduler does it. */
export async function verificationRoutes(app: HttpServer, { verification }: { verification: BackupVerification }) {
  app.route({
    ...routes.verify,
    handler: async (request, reply) => {
      const operation = await verification.start(request.params.backupId)
      return reply.code(202).send({ success: true, operationId: operation.id })
    },
  })

  app.route({ ...routes.overview, handler: () => verification.overview() })

  app.route({ ...routes.saveSettings, handler: (request) => verification.saveSettings(request.body) })
}
