import { dashboardRoutes } from '@relay/contracts'
import type { Clock, HttpServer, RateLimiter, RateLimitPolicy } from '@relay/server-kit'
import type { FastifyReply } from 'fastify'
import { collectorStatsMarker, markStreamStats } from '../health-alerts/mark-issues.js'
import type { HealthAlerts } from '../health-alerts/service.js'
import type { SourcesService } from '../sources/service.js'
import { limitDashboardReads } from './read-limit.js'

export type DashboardRouteOptions = {
  sources: Pick<SourcesService, 'collectorStats' | 'streamStats'>
  limiter: RateLimiter
  policy: RateLimitPolicy
  /** Acknowledgements and silences, which the issues carry. */
  alerts: Pick<HealthAlerts, 'marksOf' | 'version' | 'nextEnd'>
  clock: Clock
}

/**
 * Sends a statistics object serialized by the route's schema, serializing (and encoding) it only when
 * it is not the one sent last: the collector statistics stay the same object until something changes,
 * and at thousands of collectors their reply is large.
 */
function sendReusingSerialized() {
  let last: { of: object; body: Buffer } | undefined
  return (stats: object, reply: FastifyReply) => {
    const sent = last?.of === stats ? last : { of: stats, body: Buffer.from(String(reply.serialize(stats))) }
    last = sent
    return reply.type('application/json; charset=utf-8').send(sent.body)
  }
}

/** The dashboard's statistics, under the dashboard rate limit. */
export async function dashboardStatsRoutes(
  app: HttpServer,
  { sources, limiter, policy, alerts, clock }: DashboardRouteOptions,
) {
  const preHandler = limitDashboardReads(limiter, policy)
  const sendCollectorStats = sendReusingSerialized()
  const markCollectorStats = collectorStatsMarker(alerts, clock)
  app.route({
    ...dashboardRoutes.collectorStats,
    preHandler,
    handler: async (_request, reply) => sendCollectorStats(markCollectorStats(await sources.collectorStats()), reply),
  })
  app.route({
    ...dashboardRoutes.streamStats,
    preHandler,
    handler: async () => markStreamStats(alerts, await sources.streamStats()),
  })
}
