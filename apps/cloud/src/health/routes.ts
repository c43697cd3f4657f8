import { getCloudHealth } from '@relay/contracts'
import { type HttpServer, healthReport } from '@relay/server-kit'
import type { CloudDatabase } from '../db/database.js'

export type HealthRoutesOptions = { database: CloudDatabase; version: string; startedAt: number }

export async function healthRoutes(app: HttpServer, { database, version, startedAt }: HealthRoutesOptions) {
  app.route({
    // Polled every few seconds by the UI and monitors: log only problems.
    logLevel: 'warn',
    ...getCloudHealth,
    // Liveness for monitors and load balancers, which hold no token.
    config: { public: true },
    handler: async (_request, reply) => {
      const db = await database.ping()
      return reply
        .code(db.ok ? 200 : 503)
        .header('cache-control', 'no-store')
        .send(healthReport(db, version, startedAt))
    },
  })
}
