import { createHttpServer, migrateAtStartup, packageVersion } from '@relay/server-kit'
import type { CloudConfig } from './config.js'
import { type CloudDatabase, openDatabase } from './db/database.js'
import { migrations } from './db/migrations/index.js'
import { healthRoutes } from './health/routes.js'
import { paymentRoutes } from './payments/routes.js'
import { openRedis, type Redis } from './redis.js'
import { createCloudServices } from './services.js'

export type CloudOverrides = {
  /** An already opened database; the app migrates it but does not close it. */
  database?: CloudDatabase
}

export const version = packageVersion(import.meta.url)

/** The composition root of the cloud service: everything is wired here with plain calls. */
export async function createApp(config: CloudConfig, overrides: CloudOverrides = {}) {
  const app = createHttpServer({ logger: { level: config.logLevel, pretty: config.prettyLogs } })
  const database = overrides.database ?? (await openDatabase(config))
  if (!overrides.database) {
    app.addHook('onClose', () => database.close())
  }
  await migrateAtStartup(app, database.db, migrations)
  const redis: Redis | undefined = config.redisUrl ? openRedis(config.redisUrl) : undefined
  if (redis) {
    app.addHook('onClose', async () => {
      await redis.quit()
    })
  }
  const services = createCloudServices({ config, database, redis, log: app.log })
  app.addHook('onClose', () => services.close())

  await app.register(healthRoutes, { database, version, startedAt: performance.now() })
  await app.register(paymentRoutes, { payments: services.payments })
  return app
}

export type CloudApp = Awaited<ReturnType<typeof createApp>>
