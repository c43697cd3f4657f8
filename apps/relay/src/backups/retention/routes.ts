import { backupRetentionRoutes as routes } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { Retention } from './index.js'

/** /api/cloud-backups/retention: the keep policy of this relay's cloud backups, and what of it fits. */
export async function retentionRoutes(app: HttpServer, { retention }: { retention: Retention }) {
  app.route({ ...routes.getRetention, handler: () => retention.overview() })
  app.route({ ...routes.updateRetention, handler: (request) => retention.update(request.body) })
}
