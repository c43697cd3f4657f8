import { sourceRoutes as routes } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { FastifyReply } from 'fastify'
import type { SourcesService } from './service.js'

/** A create handler: 201 with what was made. */
const created =
  <Body, Made>(create: (body: Body) => Promise<Made>) =>
  async (request: { body: Body }, reply: FastifyReply) =>
    reply.code(201).send(await create(request.body))

/** A delete handler: the id from the path, and a plain success. */
const deleted = (remove: (id: string) => Promise<void>) => async (request: { params: { id: string } }) => {
  await remove(request.params.id)
  return { success: true as const }
}

/** Collectors, streams and junctions (their dashboard statistics are served by the dashboard's routes). */
export async function sourceRoutes(app: HttpServer, { sources }: { sources: SourcesService }) {
  app.route({ ...routes.listCollectors, handler: () => sources.listCollectors() })
  app.route({ ...routes.createCollector, handler: created((body) => sources.createCollector(body)) })
  app.route({ ...routes.getCollector, handler: (request) => sources.getCollector(request.params.id) })
  app.route({
    ...routes.updateCollector,
    handler: (request) => sources.updateCollector(request.params.id, request.body),
  })
  app.route({ ...routes.deleteCollector, handler: deleted((id) => sources.deleteCollector(id)) })
  app.route({ ...routes.startCollector, handler: (request) => sources.setCollectorActive(request.params.id, true) })
  app.route({ ...routes.stopCollector, handler: (request) => sources.setCollectorActive(request.params.id, false) })
  app.route({
    ...routes.unlockCollector,
    handler: (request) => sources.unlockCollector(request.params.id, request.body.password),
  })
  app.route({ ...routes.listSensors, handler: (request) => sources.listSensors(request.params.id) })

  app.route({ ...routes.listStreams, handler: () => sources.listStreams() })
  app.route({ ...routes.createStream, handler: created((body) => sources.createStream(body)) })
  app.route({ ...routes.getStream, handler: (request) => sources.getStream(request.params.id) })
  app.route({ ...routes.updateStream, handler: (request) => sources.updateStream(request.params.id, request.body) })
  app.route({ ...routes.deleteStream, handler: deleted((id) => sources.deleteStream(id)) })

  app.route({ ...routes.listJunctions, handler: () => sources.listJunctions() })
  app.route({ ...routes.createJunction, handler: created((body) => sources.createJunction(body)) })
  app.route({ ...routes.getJunction, handler: (request) => sources.getJunction(request.params.id) })
  app.route({ ...routes.updateJunction, handler: (request) => sources.updateJunction(request.params.id, request.body) })
  app.route({ ...routes.deleteJunction, handler: deleted((id) => sources.deleteJunction(id)) })
  app.route({ ...routes.startJunction, handler: (request) => sources.startJunction(request.params.id) })
  app.route({ ...routes.stopJunction, handler: (request) => sources.stopJunction(request.params.id) })

  app.route({ ...routes.getHealthSettings, handler: () => sources.getHealthSettings() })
  app.route({ ...routes.updateHealthSettings, handler: (request) => sources.updateHealthSettings(request.body) })
}
