import { Redis } from 'ioredis'

/** Where Redis outages are reported; the app's logger fits. */
export type RedisLog = {
  warn(object: object, message: string): void
  info(message: string): void
}

/**
 * Redis only speeds things up or shares state between instances, so no request may wait long for it:
 * a command gets an answer or an error within these bounds, and a lost connection is retried in the
 * background, forever, without any command waiting for it.
 */
export const redisTimings = {
  /** To open the connection, ms. */
  connect: 250,
  /** For one command's reply, ms. */
  command: 250,
  /** The longest pause between two reconnection attempts, ms. */
  maxReconnectDelay: 2_000,
  /** How long a use of Redis goes without it after a failure before trying again, ms. */
  pauseAfterFailure: 1_000,
} as const

export type OpenRedisOptions = { log?: RedisLog }

/** One Redis connection for shared caches and rate limits; commands fail at once while it is down. */
export function openRedis(url: string, { log }: OpenRedisOptions = {}): Redis {
  const redis = new Redis(url, {
    connectTimeout: redisTimings.connect,
    commandTimeout: redisTimings.command,
    // Queued commands would wait for a reconnection: while disconnected, each one fails straight away.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // Never gives up (a number, never null): the connection comes back whenever Redis does.
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 10), redisTimings.maxReconnectDelay),
  })
  // ioredis emits 'error' for every failed attempt: report the outage once, and its end once.
  let down = false
  redis.on('error', (err: Error) => {
    if (!down) {
      down = true
      log?.warn({ err: err.message }, 'redis unavailable; reconnecting in the background')
    }
  })
  redis.on('ready', () => {
    if (down) {
      down = false
      log?.info('redis available again')
    }
  })
  return redis
}

/**
 * Opens Redis and waits for the connection, but never longer than the connect timeout: a dead Redis
 * must not stop the start, and a live one should be ready before the first request needs it.
 */
export async function connectRedis(url: string, options: OpenRedisOptions = {}): Promise<Redis> {
  const redis = openRedis(url, options)
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      redis.off('ready', done)
      resolve()
    }
    const timer = setTimeout(done, redisTimings.connect * 2)
    redis.on('ready', done)
  })
  return redis
}

/** Closes politely when connected; otherwise (QUIT cannot be sent) drops the connection and its retries. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await redis.quit()
      return
    } catch {
      // Lost between the check and the command: disconnecting below still ends the retries.
    }
  }
  redis.disconnect()
}

/** Thrown instead of sending a command while a use of Redis pauses after a failure. */
export class RedisPaused extends Error {
  constructor(name: string) {
    super(`${name}: Redis failed a moment ago`)
    this.name = 'RedisPaused'
  }
}

export type RedisUse = {
  /** Runs a command, or throws at once while paused after a failure. */
  run<T>(command: () => Promise<T>): Promise<T>
  /** Whether a command would be sent now. */
  available(): boolean
  /** Ends a pause early, e.g. once the connection is back. */
  resume(): void
}

/**
 * One use of Redis (the license cache, the rate limiter): logs the start and the end of an outage once
 * each, and after a failure skips Redis for `pauseAfterFailure`, so that a Redis that accepts
 * connections but never answers costs one command timeout per pause, not one per request.
 */
export function redisUse(
  name: string,
  degraded: string,
  log?: RedisLog,
  pauseAfterFailure: number = redisTimings.pauseAfterFailure,
): RedisUse {
  let failedAt: number | undefined
  const paused = () => failedAt !== undefined && performance.now() - failedAt < pauseAfterFailure
  return {
    async run(command) {
      if (paused()) {
        throw new RedisPaused(name)
      }
      try {
        const result = await command()
        if (failedAt !== undefined) {
          failedAt = undefined
          log?.info(`${name}: redis available again`)
        }
        return result
      } catch (err) {
        if (failedAt === undefined) {
          log?.warn({ err }, `${name}: redis unavailable; ${degraded}`)
        }
        failedAt = performance.now()
        throw err
      }
    },
    available: () => !paused(),
    resume() {
      if (failedAt !== undefined) {
        failedAt = Number.NEGATIVE_INFINITY
      }
    },
  }
}

export type { Redis }
