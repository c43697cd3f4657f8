import { healthHistoryRoutes as routes } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { createHistoryQueries } from './query.js'

/** /api/health/history and /api/health/events: private, like every route not marked public. */
export async function healthHistoryRoutes(
  app: HttpServer,
  { queries }: { queries: ReturnType<typeof createHistoryQueries> },
) {
  app.route({ ...routes.history, handler: (request) => queries.history(request.query) })
  app.route({ ...routes.events, handler: (request) => queries.events(request.query) })
}
