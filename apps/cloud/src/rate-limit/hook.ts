import { AppError, rateLimitPolicies } from '@relay/contracts'
import type { RateLimiter, RateLimitPolicy } from '@relay/server-kit'
import type { FastifyInstance } from 'fastify'
import { rateLimitHeaders } from './headers.js'

export type RateLimitPolicyName = keyof typeof rateLimitPolicies

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The token bucket this route draws from, per user. */
    rateLimit?: RateLimitPolicyName
  }
}

/**
 * Applies each route's `rateLimit` policy to the authenticated caller: `RateLimit-*` headers on
 * every reply, 429 with `Retry-After` once the bucket is empty, 503 with `Retry-After` while the
 * buckets' store is unreachable (the limiter's own error). Runs after the access-token guard.
 */
export function limitPerUser(
  scope: FastifyInstance,
  limiter: RateLimiter,
  policies: Record<RateLimitPolicyName, RateLimitPolicy> = rateLimitPolicies,
): void {
  scope.addHook('onRequest', async (request, reply) => {
    const policyName = request.routeOptions.config.rateLimit
    if (!policyName) {
      return
    }
    // Without its store (Redis) a limit cannot be enforced: the limiter refuses rather than let everything through.
    const result = await limiter.consume(`${policyName}:${request.principal.id}`, policies[policyName])
    if (!result.allowed) {
      throw new AppError(
        'RATE_LIMITED',
        `Too many requests; try again in ${Math.max(1, Math.ceil(result.retryAfterMs / 1000))} s`,
        { headers: rateLimitHeaders(result) },
      )
    }
    reply.headers(rateLimitHeaders(result))
  })
}
