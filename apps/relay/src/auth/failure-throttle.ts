import type { Clock } from '@relay/server-kit'

/**
 * Counts failed sign-ins per key (a username, a client address) in a sliding window. A key that has
 * reached its limit is refused until its oldest failure leaves the window.
 */
export function createFailureThrottle({ windowMs, clock }: { windowMs: number; clock: Clock }) {
  const failures = new Map<string, number[]>()

  function recent(key: string, now: number): number[] {
    const times = (failures.get(key) ?? []).filter((at) => at > now - windowMs)
    if (times.length === 0) {
      failures.delete(key)
    } else {
      failures.set(key, times)
    }
    return times
  }

  return {
    /** Milliseconds until any of `limits` allows another try, or 0 when all do. */
    retryAfter(limits: ReadonlyArray<{ key: string; max: number }>): number {
      const now = clock.now().getTime()
      let wait = 0
      for (const { key, max } of limits) {
        const times = recent(key, now)
        if (times.length >= max) {
          wait = Math.max(wait, (times[times.length - max] ?? now) + windowMs - now)
        }
      }
      return wait
    },
    fail(keys: readonly string[]): void {
      const now = clock.now().getTime()
      for (const key of keys) {
        failures.set(key, [...recent(key, now), now])
      }
    },
    forget(key: string): void {
      failures.delete(key)
    },
  }
}
