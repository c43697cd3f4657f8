import { Readable } from 'node:stream'
import { AppError, relayBackupRoutes as routes } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { BackupService } from './service.js'

/** /api/cloud-backups: this relay's backups and restores, and the cloud's backup API with the relay's token. */
export async function backupRoutes(app: HttpServer, { backups }: { backups: BackupService }) {
  app.route({ ...routes.status, handler: () => backups.status() })

  app.route({
    ...routes.settings,
    handler: async (request) => ({ success: true as const, settings: await backups.saveSettings(request.body) }),
  })

  app.route({ ...routes.list, handler: (request) => backups.list(request.query) })

  app.route({
    ...routes.create,
    handler: async (_request, reply) => {
      const operation = await backups.startBackup('manual')
      return reply.code(202).send({ success: true, operationId: operation.id })
    },
  })

  app.route({
    ...routes.operations,
    // Polled every second while one runs: log only problems.
    logLevel: 'warn',
    handler: () => ({ success: true as const, operations: backups.operations.list() }),
  })

  app.route({ ...routes.operation, logLevel: 'warn', handler: (request) => backups.getOperation(request.params.id) })

  app.route({
    ...routes.download,
    handler: async (request, reply) => {
      const grant = await backups.requestDownload(request.params.backupId)
      const response = await fetch(grant.downloadUrl).catch((err: unknown) => {
        throw new AppError('UNAVAILABLE', `The object store is unreachable: ${(err as Error).message}`)
      })
      if (!response.ok || !response.body) {
        await response.body?.cancel()
        throw new AppError('UNAVAILABLE', `The object store refused the download (${response.status})`)
      }
      return reply
        .header('content-type', 'application/zip')
        .header('content-length', String(grant.compressedSize))
        .header('content-disposition', `attachment; filename="${grant.filename.replace(/["\\\r\n]/g, '_')}"`)
        .header('cache-control', 'no-store')
        .send(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream) as never)
    },
  })

  app.route({
    ...routes.restore,
    handler: async (request, reply) => {
      const operation = await backups.startRestore(request.params.backupId, request.body)
      return reply.code(202).send({ success: true, operationId: operation.id })
    },
  })

  app.route({
    ...routes.remove,
    handler: async (request) => {
      await backups.remove(request.params.backupId)
      return { success: true as const }
    },
  })
}
