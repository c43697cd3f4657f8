import {
  backupSettingsRoute,
  backupStatusRoute,
  completeUploadRoute,
  deleteBackupRoute,
  listBackupsRoute,
  requestDownloadRoute,
  requestUploadRoute,
} from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { BackupService } from './service.js'

const dashboard = { rateLimit: 'dashboard' } as const
const upload = { rateLimit: 'backup' } as const

/** The cloud backup endpoints, for user tokens only; the access-token guard and the rate limiter run before each. */
export async function backupRoutes(app: HttpServer, { backups }: { backups: BackupService }) {
  app.route({
    ...backupStatusRoute,
    config: dashboard,
    handler: (request) => backups.status(request.principal.id),
  })

  app.route({
    ...backupSettingsRoute,
    config: dashboard,
    handler: async (request) => ({
      success: true as const,
      settings: await backups.updateSettings(request.principal.id, request.body),
    }),
  })

  app.route({
    ...requestUploadRoute,
    config: upload,
    handler: (request) => backups.requestUpload(request.principal.id, request.body),
  })

  app.route({
    ...completeUploadRoute,
    config: upload,
    handler: async (request) => ({
      success: true as const,
      backup: await backups.completeUpload(request.principal.id, request.body),
    }),
  })

  app.route({
    ...listBackupsRoute,
    config: dashboard,
    handler: (request) => backups.list(request.principal.id, request.query),
  })

  app.route({
    ...requestDownloadRoute,
    config: dashboard,
    handler: (request) => backups.requestDownload(request.principal.id, request.params.backupId),
  })

  app.route({
    ...deleteBackupRoute,
    config: dashboard,
    handler: async (request) => {
      await backups.remove(request.principal.id, request.params.backupId)
      return { success: true as const }
    },
  })
}
