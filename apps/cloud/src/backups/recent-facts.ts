import type { Clock } from '@relay/server-kit'

/**
 * How long a status read may be reused. Changes made through this instance drop the entry at
 * once; a change made through another instance shows here within this time.
 */
export const statusFreshFor = 2000
const maxEntries = 10_000

/**
 * Per-user facts for the status reply, reused for `statusFreshFor` and shared by concurrent
 * callers. A read that was in flight while a write happened is not kept.
 */
export function createRecentFacts<T>(load: (userId: string) => Promise<T>, clock: Clock) {
  const entries = new Map<string, { value: Promise<T>; at: number; generation: number }>()
  let generation = 0

  function forget(userIds: Iterable<string>) {
    generation++
    for (const userId of userIds) {
      entries.delete(userId)
    }
  }

  return {
    get(userId: string): Promise<T> {
      const now = clock.now().getTime()
      const entry = entries.get(userId)
      if (entry && now - entry.at < statusFreshFor) {
        return entry.value
      }
      if (entries.size >= maxEntries) {
        entries.clear()
      }
      const started = generation
      const value = load(userId)
      entries.set(userId, { value, at: now, generation: started })
      value.then(
        () => {
          // A write landed while this read ran: the read may predate it.
          if (generation !== started && entries.get(userId)?.value === value) {
            entries.delete(userId)
          }
        },
        () => entries.delete(userId),
      )
      return value
    },

    /** Waits for a write of this user's data, then drops their entry (even when the write failed). */
    async after<R>(userId: string, write: Promise<R>): Promise<R> {
      try {
        return await write
      } finally {
        forget([userId])
      }
    },

    forget,

    forgetAll() {
      generation++
      entries.clear()
    },
  }
}
