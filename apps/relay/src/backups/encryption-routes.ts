import { backupEncryptionRoutes as routes } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { BackupPassphrase } from './passphrase.js'

/** /api/cloud-backups/encryption: the passphrase backups are encrypted with; it is never sent back. */
export async function backupEncryptionRoutes(app: HttpServer, { passphrase }: { passphrase: BackupPassphrase }) {
  app.route({ ...routes.status, handler: () => passphrase.status() })
  app.route({ ...routes.set, handler: (request) => passphrase.set(request.body.passphrase) })
  app.route({ ...routes.remove, handler: () => passphrase.remove() })
}
