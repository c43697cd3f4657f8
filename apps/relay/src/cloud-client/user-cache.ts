import type { Clock } from '@relay/server-kit'

/** Values kept for a while under a key and tagged with the cloud user they belong to. */
export function createUserCache<T>({
  ttlMs,
  clock,
  maxEntries = 1000,
}: {
  ttlMs: number
  clock: Clock
  maxEntries?: number
}) {
  const entries = new Map<string, { value: T; userId: string; expiresAt: number }>()
  return {
    get(key: string): T | undefined {
      const entry = entries.get(key)
      if (!entry) {
        return undefined
      }
      if (entry.expiresAt <= clock.now().getTime()) {
        entries.delete(key)
        return undefined
      }
      return entry.value
    },
    set(key: string, userId: string, value: T): void {
      if (entries.size >= maxEntries) {
        entries.delete(entries.keys().next().value as string)
      }
      entries.set(key, { value, userId, expiresAt: clock.now().getTime() + ttlMs })
    },
    delete(key: string): void {
      entries.delete(key)
    },
    /** Drops everything cached for `userId`. */
    invalidateUser(userId: string): void {
      for (const [key, entry] of entries) {
        if (entry.userId === userId) {
          entries.delete(key)
        }
      }
    },
  }
}

export type UserCache<T> = ReturnType<typeof createUserCache<T>>
