import { createHash } from 'node:crypto'
import { AppError } from '@relay/contracts'
import type { RateLimiter, RateLimitPolicy } from '@relay/server-kit'
import type { FastifyRequest } from 'fastify'

/**
 * Whose bucket a dashboard read draws from: the signed-in session, else the cloud user of a bearer
 * token, else (auth mode none) the client's address. Sessions are named by a hash, so the buckets
 * never hold a usable token.
 */
export function readerOf(request: FastifyRequest): string {
  const { sessionToken, user } = request.auth
  if (sessionToken) {
    return `session:${createHash('sha256').update(sessionToken).digest('base64url')}`
  }
  if (user) {
    return `user:${user.kind}:${user.id}`
  }
  return `client:${request.ip}`
}

/**
 * The spec's dashboard rate limit on the relay's dashboard reads: one bucket per reader for all of
 * them, 429 `RATE_LIMITED` with `Retry-After` (whole seconds, at least 1) once it is empty.
 */
export function limitDashboardReads(limiter: RateLimiter, policy: RateLimitPolicy) {
  return async (request: FastifyRequest): Promise<void> => {
    const result = await limiter.consume(readerOf(request), policy)
    if (!result.allowed) {
      const seconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000))
      throw new AppError('RATE_LIMITED', `Too many dashboard requests; try again in ${seconds} s`, {
        headers: { 'Retry-After': String(seconds) },
      })
    }
  }
}
