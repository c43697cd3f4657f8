import { notificationRoutes as routes } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import { authEventKinds } from './kinds.js'
import type { NotificationService } from './service.js'

/** /api/notifications: no rate limit, as the spec says. */
export async function notificationRoutes(app: HttpServer, { notifications }: { notifications: NotificationService }) {
  app.route({
    ...routes.pending,
    handler: (request) => notifications.pending(request.query.since),
  })

  app.route({
    ...routes.create,
    handler: async (request, reply) => {
      const notification = await notifications.create(request.body)
      return reply.code(201).send({ success: true, notification })
    },
  })

  app.route({ ...routes.get, handler: (request) => notifications.get(request.params.id) })

  app.route({ ...routes.history, handler: (request) => notifications.history(request.query) })

  app.route({
    ...routes.cleanup,
    handler: async (request) => ({
      success: true as const,
      removed: await notifications.cleanup(request.query.olderThanDays ?? 30),
    }),
  })

  app.route({
    ...routes.removeExpired,
    handler: async () => ({ success: true as const, removed: await notifications.removeExpired() }),
  })

  app.route({
    ...routes.ack,
    handler: async (request) => ({
      success: true as const,
      acknowledged: await notifications.acknowledge(request.body.ids),
    }),
  })

  app.route({
    ...routes.healthReportSent,
    handler: async (request, reply) => {
      const { deviceName } = request.body
      const notification = await notifications.notify('healthReportSent', {
        message: `Health report from ${deviceName} was sent to the cloud`,
      })
      return reply.code(201).send({ success: true, notification })
    },
  })

  app.route({
    ...routes.healthReportFailed,
    handler: async (request, reply) => {
      const { deviceName, error } = request.body
      const notification = await notifications.notify('healthReportFailed', {
        message: `Health report from ${deviceName} could not be sent: ${error}`,
      })
      return reply.code(201).send({ success: true, notification })
    },
  })

  app.route({
    ...routes.systemUpdate,
    handler: async (request, reply) => {
      const { version, message } = request.body
      const notification = await notifications.notify('systemUpdate', {
        title: `Relay ${version}`,
        message: message ?? `Relay ${version} is available`,
      })
      return reply.code(201).send({ success: true, notification })
    },
  })

  app.route({
    ...routes.authEvent,
    handler: async (request, reply) => {
      const { kind, message } = authEventKinds[request.body.event]
      const notification = await notifications.notify(kind, { message: message(request.body.username) })
      return reply.code(201).send({ success: true, notification })
    },
  })
}
