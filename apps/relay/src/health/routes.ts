import { getRelayHealth } from '@relay/contracts'
import { type HttpServer, healthReport } from '@relay/server-kit'
import type { RelayDatabase } from '../db/database.js'

export type HealthRoutesOptions = { database: RelayDatabase; backendId: string; version: string; startedAt: number }

export async function healthRoutes(app: HttpServer, { database, backendId, version, startedAt }: HealthRoutesOptions) {
  app.route({
    // Polled every few seconds by the UI and monitors: log only problems.
    logLevel: 'warn',
    ...getRelayHealth,
    config: { public: true },
    handler: async (_request, reply) => {
      const db = await database.ping()
      return reply
        .code(db.ok ? 200 : 503)
        .header('cache-control', 'no-store')
        .send({ ...healthReport(db, version, startedAt), backendId })
    },
  })
}
