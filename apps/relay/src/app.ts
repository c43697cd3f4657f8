import { type Clock, createHttpServer, every, migrateAtStartup, packageVersion, systemClock } from '@relay/server-kit'
import type { RelayConfig } from './config.js'
import { openDatabase, type RelayDatabase } from './db/database.js'
import { migrations } from './db/migrations/index.js'
import { featureFlagRoutes } from './feature-flags/routes.js'
import { createFeatureFlagService } from './feature-flags/service.js'
import { healthRoutes } from './health/routes.js'
import { loadOrCreateIdentity } from './identity/identity.js'
import { notificationRoutes } from './notifications/routes.js'
import { createNotificationService } from './notifications/service.js'
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
  // Background jobs stop first on close, before the database they use.
  const jobs = new AbortController()
  app.addHook('onClose', async () => jobs.abort())
  const identity = loadOrCreateIdentity(config.dataDir, clock.now())
  const database = overrides.database ?? openDatabase(config.dataDir)
  if (!overrides.database) {
    app.addHook('onClose', () => database.close())
  }
  app.log.info({ backendId: identity.backendId }, 'relay identity')
  await migrateAtStartup(app, database.db, migrations)
  const deps = { db: database.db, clock, log: app.log }
  const notifications = createNotificationService({ ...deps, log: app.log.child({ feature: 'notifications' }) })
  const featureFlags = createFeatureFlagService(deps)

  await app.register(healthRoutes, { database, backendId: identity.backendId, version, startedAt: performance.now() })
  await app.register(notificationRoutes, { notifications })
  await app.register(featureFlagRoutes, { featureFlags })

  app.addHook('onReady', async () => {
    every(config.notificationMaintenanceEvery, notifications.maintain, {
      log: app.log,
      signal: jobs.signal,
      firstRunAfter: 0,
    })
  })
  // On the root context, so the not-found handler can send index.html.
  await serveWebUi(app, config.webDir)
  return Object.assign(app, { services: { notifications, featureFlags } })
}

export type RelayApp = Awaited<ReturnType<typeof createApp>>
