import { featureFlagRoutes as routes } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { FeatureFlagService } from './service.js'

export async function featureFlagRoutes(app: HttpServer, { featureFlags }: { featureFlags: FeatureFlagService }) {
  app.route({ ...routes.get, handler: () => featureFlags.get() })
  app.route({ ...routes.update, handler: (request) => featureFlags.update(request.body) })
}
