import { AppError } from '@relay/contracts'
import {
  type BucketChange,
  type BucketStore,
  type Clock,
  createTokenBuckets,
  type RateLimiter,
} from '@relay/server-kit'
import { type Redis, type RedisLog, redisTimings, redisUse } from '../redis.js'

/** Seconds a client is asked to wait when limits cannot be checked: Redis is retried about this often. */
export const unavailableRetryAfterSeconds = Math.ceil(redisTimings.maxReconnectDelay / 1000)

/**
 * Thrown when the bucket store (Redis) cannot be reached: a limit that cannot be checked refuses
 * (503 with `Retry-After`) rather than letting every request through.
 */
export class RateLimitUnavailable extends AppError {
  constructor(options?: ErrorOptions) {
    super('UNAVAILABLE', 'The service is briefly unavailable; try again shortly', {
      ...options,
      headers: { 'Retry-After': String(unavailableRetryAfterSeconds) },
    })
  }
}

export type RateLimiterOptions = {
  clock: Clock
  /** Buckets shared by every instance using this Redis; without it each process keeps its own. */
  redis?: Redis
  /** Namespaces the buckets, e.g. `relay:rate:`. */
  prefix: string
  /** Where a Redis outage is reported, once at its start and once at its end. */
  log?: RedisLog
}

/** The cloud's token buckets (see DESIGN.md §4): in Redis when there is one, so every instance shares them. */
export function createRateLimiter({ clock, redis, prefix, log }: RateLimiterOptions): RateLimiter {
  return createTokenBuckets({ clock, prefix, store: redis ? createRedisStore(redis, log) : undefined })
}

/**
 * The same steps as the memory store in one script, so Redis runs each call alone: instances racing on a
 * bucket can never take more than it holds. Time comes from the caller's clock, never Redis's.
 */
const bucketScript = `
local now = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local refillEvery = tonumber(ARGV[3])
local units = tonumber(ARGV[5]) * refillEvery
local full = capacity * refillEvery
local level = full
local at = now
local stored = redis.call('HMGET', KEYS[1], 'level', 'at')
if stored[1] and stored[2] then
  level = tonumber(stored[1])
  at = tonumber(stored[2])
  if now > at then
    level = math.min(full, level + math.min(now - at, refillEvery) * capacity)
    at = now
  end
end
local allowed = 1
if ARGV[4] == 'give' then
  level = math.min(full, level + units)
elseif level >= units then
  level = level - units
else
  allowed = 0
end
if level >= full then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'level', level, 'at', at)
  redis.call('PEXPIRE', KEYS[1], at - now + math.ceil((full - level) / capacity) + tonumber(ARGV[6]))
end
return {allowed, level, at}
`

/**
 * Redis expires keys on its own clock, not ours; the margin keeps a key until its bucket is surely full even
 * when the two disagree a little. A key outliving that point is harmless: it reads as full.
 */
const expiryMarginMs = 1_000
const commandName = 'relayRateLimitBucket'

type BucketCommand = (
  key: string,
  now: number,
  capacity: number,
  refillEvery: number,
  kind: BucketChange['kind'],
  tokens: number,
  expiryMargin: number,
) => Promise<[number, number, number]>

function createRedisStore(redis: Redis, log?: RedisLog): BucketStore {
  // defineCommand sends EVALSHA and loads the script once when Redis does not know it yet.
  redis.defineCommand(commandName, { numberOfKeys: 1, lua: bucketScript })
  const run = (redis as unknown as Record<typeof commandName, BucketCommand>)[commandName].bind(redis)
  const use = redisUse('rate limiter', `limited requests are refused (${unavailableRetryAfterSeconds} s)`, log)
  return {
    async apply(key, policy, { kind, tokens }, now) {
      const [allowed, level, at] = await use
        .run(() => run(key, now, policy.capacity, policy.refillEvery, kind, tokens, expiryMarginMs))
        .catch((err: unknown) => {
          throw new RateLimitUnavailable({ cause: err })
        })
      return { allowed: allowed === 1, bucket: { level, at } }
    },
    size: () => 0,
  }
}
