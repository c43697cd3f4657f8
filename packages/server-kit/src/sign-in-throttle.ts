import { AppError } from '@relay/contracts'
import type { Clock } from './clock.js'
import { createTokenBuckets, type RateLimiter, type RateLimitPolicy } from './token-buckets.js'

/** Failed sign-ins allowed per account and per client address before either has to wait. */
export type SignInLimits = { account: RateLimitPolicy; address: RateLimitPolicy }

/** A sign-in refused before its password was checked: the account or the address has guessed too often. */
export class SignInThrottled extends AppError {
  /** Whole minutes to wait, at least 1, for a message. */
  readonly minutes: number

  constructor(retryAfterMs: number) {
    const minutes = Math.max(1, Math.ceil(retryAfterMs / 60_000))
    super('RATE_LIMITED', `Too many failed sign-ins; try again in ${minutes} minute${minutes === 1 ? '' : 's'}`, {
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    })
    this.minutes = minutes
  }
}

export type SignInThrottleOptions = {
  limits: SignInLimits
  clock: Clock
  /** Buckets shared by several processes (the cloud's Redis); this process's memory without them. */
  buckets?: RateLimiter
}

/**
 * Throttles password guessing with a token bucket per account and per client address. Every attempt
 * takes a token before the password is checked, so parallel guesses cannot slip past the count, and
 * the right password does not get past an empty bucket either; a success gives its tokens back, so
 * only failures count.
 */
export function createSignInThrottle({ limits, clock, buckets }: SignInThrottleOptions) {
  const store = buckets ?? createTokenBuckets({ clock, prefix: '' })
  return {
    /**
     * Counts an attempt for `account` (case-insensitive) from `address`; throws `SignInThrottled` when
     * either has no attempt left. Call `succeeded` once the password matched.
     */
    async attempt(account: string, address: string): Promise<{ succeeded(): Promise<void> }> {
      const keys = [
        [`sign-in:account:${account.toLowerCase()}`, limits.account],
        [`sign-in:address:${address}`, limits.address],
      ] as const
      const results = await Promise.all(keys.map(([key, policy]) => store.consume(key, policy)))
      const refused = results.filter((result) => !result.allowed)
      if (refused.length > 0) {
        throw new SignInThrottled(Math.max(...refused.map((result) => result.retryAfterMs)))
      }
      return {
        async succeeded() {
          await Promise.all(keys.map(([key, policy]) => store.refund(key, policy)))
        },
      }
    },
  }
}

export type SignInThrottle = ReturnType<typeof createSignInThrottle>
