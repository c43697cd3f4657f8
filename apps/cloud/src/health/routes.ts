import { type DatabaseHealth, getCloudHealth, getCloudReadiness } from '@relay/contracts'
import { every, type HttpServer, healthReport } from '@relay/server-kit'
import type { CloudDatabase } from '../db/database.js'
import type { Redis } from '../redis.js'
import type { ObjectStore } from '../storage/object-store.js'
import { createReadiness } from './readiness.js'

export type HealthRoutesOptions = {
  database: CloudDatabase
  redis?: Redis
  store: ObjectStore
  version: string
  startedAt: number
  /** How often the database is pinged in the background for `/healthz`, ms. */
  checkEvery?: number
}

/** Often enough for a monitor's view to be fresh, rarely enough to cost nothing. */
const DEFAULT_CHECK_EVERY = 15_000

export async function healthRoutes(
  app: HttpServer,
  { database, redis, store, version, startedAt, checkEvery = DEFAULT_CHECK_EVERY }: HealthRoutesOptions,
) {
  const readiness = createReadiness({ database, redis, store })
  const jobs = new AbortController()
  app.addHook('onReady', async () => {
    // Once before the first request, so /healthz has a real answer to report from the start.
    await readiness.refreshDatabase()
    every(checkEvery, readiness.refreshDatabase, { log: app.log, signal: jobs.signal })
  })
  app.addHook('onClose', async () => jobs.abort())

  app.route({
    // Polled every few seconds by the UI and monitors: log only problems.
    logLevel: 'warn',
    ...getCloudHealth,
    // Liveness for monitors and load balancers, which hold no token.
    config: { public: true },
    // No query here: a process that answers is alive, even while the database is not.
    handler: async (_request, reply) => {
      const db: DatabaseHealth = readiness.lastDatabase() ?? {
        ok: false,
        driver: database.driver,
        latencyMs: 0,
        error: 'not checked yet',
      }
      return reply
        .code(200)
        .header('cache-control', 'no-store')
        .send(healthReport(db, version, startedAt))
    },
  })

  app.route({
    logLevel: 'warn',
    ...getCloudReadiness,
    // Readiness for load balancers: whether this instance can serve requests right now.
    config: { public: true },
    handler: async (_request, reply) => {
      const { ready, body } = await readiness.check()
      return reply
        .code(ready ? 200 : 503)
        .header('cache-control', 'no-store')
        .send(body)
    },
  })
}
