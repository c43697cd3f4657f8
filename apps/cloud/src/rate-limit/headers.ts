import type { RateLimitResult } from '@relay/server-kit'

const seconds = (ms: number) => Math.ceil(ms / 1000)

/** `RateLimit-*` headers for any limited reply, plus `Retry-After` (whole seconds, at least 1) on a refusal. */
export function rateLimitHeaders(result: RateLimitResult): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(result.limit),
    'RateLimit-Remaining': String(result.remaining),
    'RateLimit-Reset': String(seconds(result.resetMs)),
  }
  if (!result.allowed) {
    // A client told to retry after 0 s would come straight back and be refused again.
    headers['Retry-After'] = String(Math.max(1, seconds(result.retryAfterMs)))
  }
  return headers
}
