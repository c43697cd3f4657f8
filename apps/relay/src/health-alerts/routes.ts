import { healthAlertRoutes as routes } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { HealthAlerts } from './service.js'

/** /api/health/acknowledgements and /api/health/silences: private, like every route not marked public. */
export async function healthAlertRoutes(app: HttpServer, { alerts }: { alerts: HealthAlerts }) {
  const ok = { success: true as const }
  app.route({ ...routes.listAcknowledgements, handler: () => alerts.listAcknowledgements() })
  app.route({ ...routes.acknowledge, handler: (request) => alerts.acknowledge(request.body) })
  app.route({
    ...routes.unacknowledge,
    handler: async (request) => {
      await alerts.unacknowledge(request.params.item)
      return ok
    },
  })
  app.route({ ...routes.listSilences, handler: () => alerts.listSilences() })
  app.route({
    ...routes.silence,
    handler: async (request, reply) => reply.code(201).send(await alerts.silence(request.body)),
  })
  app.route({
    ...routes.unsilence,
    handler: async (request) => {
      await alerts.unsilence(request.params.id)
      return ok
    },
  })
}
