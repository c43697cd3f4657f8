import { Redis } from 'ioredis'

/** One Redis connection for shared caches and rate limits; commands fail fast instead of queueing forever. */
export function openRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false })
}

export type { Redis }
