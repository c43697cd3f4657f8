import type { CloudNotReady, CloudReady, DatabaseHealth, DependencyCheck, ReadinessChecks } from '@relay/contracts'
import { coalesce } from '@relay/server-kit'
import type { CloudDatabase } from '../db/database.js'
import type { Redis } from '../redis.js'
import type { ObjectStore } from '../storage/object-store.js'

/** Each dependency gets this long to answer; a load balancer's probe should not wait for more. */
export const CHECK_TIMEOUT_MS = 1000

/** The key read back from the object store: it need not exist, the store only has to answer. */
export const PROBE_KEY = 'readyz-probe'

export type ReadinessDeps = {
  database: Pick<CloudDatabase, 'driver' | 'ping'>
  redis?: Pick<Redis, 'status' | 'ping'>
  store: Pick<ObjectStore, 'head'>
  timeoutMs?: number
}

export type Readiness = { ready: true; body: CloudReady } | { ready: false; body: CloudNotReady }

const dependencyNames: Record<keyof ReadinessChecks, string> = {
  database: 'the database',
  redis: 'Redis',
  objectStore: 'the object store',
}

/**
 * Checks every dependency in parallel, each within `timeoutMs`. Concurrent callers share one round;
 * `lastDatabase()` is the latest database answer, for the liveness endpoint to report without a query.
 */
export function createReadiness({ database, redis, store, timeoutMs = CHECK_TIMEOUT_MS }: ReadinessDeps) {
  let lastDatabase: DatabaseHealth | undefined

  const checkDatabase = async (): Promise<DependencyCheck> => {
    const health = await database.ping()
    lastDatabase = health
    if (!health.ok) {
      throw new Error(health.error ?? 'no answer')
    }
    return 'ok'
  }

  const checkRedis = async (): Promise<DependencyCheck> => {
    if (!redis) {
      return 'not configured'
    }
    // While disconnected a command would fail (or wait for a reconnection); the state says it all.
    if (redis.status !== 'ready') {
      throw new Error(`not connected (${redis.status})`)
    }
    await redis.ping()
    return 'ok'
  }

  const checkObjectStore = async (): Promise<DependencyCheck> => {
    await store.head(PROBE_KEY)
    return 'ok'
  }

  const check = coalesce(async (): Promise<Readiness> => {
    const [db, cache, objects] = await Promise.all([
      within(timeoutMs, checkDatabase),
      within(timeoutMs, checkRedis),
      within(timeoutMs, checkObjectStore),
    ])
    const checks: ReadinessChecks = { database: db, redis: cache, objectStore: objects }
    const failing = (Object.keys(checks) as (keyof ReadinessChecks)[]).filter((name) =>
      checks[name].startsWith('failed'),
    )
    if (failing.length === 0) {
      return { ready: true, body: { status: 'ready', checks } }
    }
    const names = failing.map((name) => dependencyNames[name])
    return {
      ready: false,
      body: {
        success: false,
        error: `Not ready: ${names.join(' and ')} ${names.length > 1 ? 'are' : 'is'} not answering`,
        code: 'UNAVAILABLE',
        status: 'not ready',
        checks,
      },
    }
  })

  return {
    check,
    /** Pings the database alone (the background liveness check) and remembers the answer. */
    refreshDatabase: () => within(timeoutMs, checkDatabase),
    lastDatabase: () => lastDatabase,
  }
}

export type ReadinessService = ReturnType<typeof createReadiness>

/** `run`'s result, or `failed: <reason>` when it throws or does not settle within `ms`. */
async function within(ms: number, run: () => Promise<DependencyCheck>): Promise<DependencyCheck> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<DependencyCheck>((resolve) => {
    timer = setTimeout(() => resolve(`failed: no answer within ${ms} ms`), ms)
  })
  try {
    // The loser of the race keeps running; its rejection is handled here, so it is never unhandled.
    return await Promise.race([run().catch((err: unknown) => failed(err)), late])
  } finally {
    clearTimeout(timer)
  }
}

function failed(err: unknown): DependencyCheck {
  const message = err instanceof Error ? err.message || err.name : String(err)
  // First line only, and short: enough for an operator to know where to look.
  const reason = (message.split('\n')[0] ?? '').trim().slice(0, 200) || 'unknown error'
  return `failed: ${reason}`
}
