import { type Clock, createHttpServer, migrateAtStartup, packageVersion, systemClock } from '@relay/server-kit'
import type { RelayConfig } from './config.js'
import { openDatabase, type RelayDatabase } from './db/database.js'
import { migrations } from './db/migrations/index.js'
import { healthRoutes } from './health/routes.js'
import { loadOrCreateIdentity } from './identity/identity.js'
import { serveWebUi, spaFallback } from './web/routes.js'

export type RelayOverrides = {
  /** An already opened database; the app migrates it but does not close it. */
  database?: RelayDatabase
  clock?: Clock
}

export const version = packageVersion(import.meta.url)

/** The composition root of the relay: everything is wired here with plain calls. */
export async function createApp(config: RelayConfig, overrides: RelayOverrides = {}) {
  const clock = overrides.clock ?? systemClock
  const app = createHttpServer({
    logger: { level: config.logLevel, pretty: config.prettyLogs },
    notFound: spaFallback(config.webDir),
  })
  const identity = loadOrCreateIdentity(config.dataDir, clock.now())
  const database = overrides.database ?? openDatabase(config.dataDir)
  if (!overrides.database) {
    app.addHook('onClose', () => database.close())
  }
  app.log.info({ backendId: identity.backendId }, 'relay identity')
  await migrateAtStartup(app, database.db, migrations)
  await app.register(healthRoutes, { database, backendId: identity.backendId, version, startedAt: performance.now() })
  // On the root context, so the not-found handler can send index.html.
  await serveWebUi(app, config.webDir)
  return app
}

export type RelayApp = Awaited<ReturnType<typeof createApp>>
