import { AppError } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import { type Redis, type RedisLog, redisTimings, redisUse } from '../redis.js'

/** A token bucket: holds at most `capacity` tokens and regains `capacity` tokens every `refillEvery` ms. */
export type RateLimitPolicy = Readonly<{ capacity: number; refillEvery: number }>

export type RateLimitResult = {
  allowed: boolean
  /** The policy's capacity. */
  limit: number
  /** Whole tokens left after this call. */
  remaining: number
  /** 0 when allowed; otherwise ms until the refused cost would be available. */
  retryAfterMs: number
  /** ms until the bucket is full again. */
  resetMs: number
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

/** Seconds a client is asked to wait when limits cannot be checked: Redis is retried about this often. */
export const unavailableRetryAfterSeconds = Math.ceil(redisTimings.maxReconnectDelay / 1000)

/**
 * Thrown when the bucket store (Redis) cannot be reached: a limit that cannot be checked refuses
 * (503 with `Retry-After`) rather than letting every request through.
 */
export class RateLimitUnavailable extends AppError {
  readonly retryAfterSeconds = unavailableRetryAfterSeconds

  constructor(options?: ErrorOptions) {
    super('UNAVAILABLE', 'The service is briefly unavailable; try again shortly', options)
  }
}

export type RateLimiter = {
  /**
   * Refills the bucket for the time passed, then takes `cost` tokens if it holds them (nothing otherwise).
   * One bucket per key: include the policy's name in the key when one subject has several policies.
   */
  consume(key: string, policy: RateLimitPolicy, cost?: number): Promise<RateLimitResult>
  /** Gives tokens back, never beyond capacity, e.g. for a request that should not count. */
  refund(key: string, policy: RateLimitPolicy, amount?: number): Promise<void>
  /** Buckets held in this process's memory (always 0 with Redis, where keys expire on their own). */
  bucketsInMemory(): number
}

/**
 * Levels are kept in units of 1/refillEvery token, so one ms adds exactly `capacity` units: integer arithmetic
 * in JavaScript and Lua alike, with no rounding drift between refills.
 */
type Bucket = { level: number; at: number }
type Change = { kind: 'take' | 'give'; tokens: number }
type Outcome = { allowed: boolean; bucket: Bucket }

interface BucketStore {
  apply(key: string, policy: RateLimitPolicy, change: Change, now: number): Promise<Outcome>
  size(): number
}

/** Token-bucket rate limits; see DESIGN.md §4 (no fixed-window edge bursts). */
export function createRateLimiter({ clock, redis, prefix, log }: RateLimiterOptions): RateLimiter {
  const store = redis ? createRedisStore(redis, log) : createMemoryStore()
  return {
    async consume(key, policy, cost = 1) {
      checkPolicy(policy)
      checkTokens('cost', cost, policy)
      const now = clock.now().getTime()
      const { allowed, bucket } = await store.apply(prefix + key, policy, { kind: 'take', tokens: cost }, now)
      return toResult(policy, cost, allowed, bucket, now)
    },
    async refund(key, policy, amount = 1) {
      checkPolicy(policy)
      checkTokens('amount', amount, policy)
      await store.apply(prefix + key, policy, { kind: 'give', tokens: amount }, clock.now().getTime())
    },
    bucketsInMemory: () => store.size(),
  }
}

function checkPolicy({ capacity, refillEvery }: RateLimitPolicy) {
  if (!Number.isSafeInteger(capacity) || capacity < 1 || !Number.isSafeInteger(refillEvery) || refillEvery < 1) {
    throw new RangeError(`rate limit policy needs positive integers, got ${capacity} per ${refillEvery} ms`)
  }
}

// A cost above capacity could never be met; refusing it forever would hide the mistake.
function checkTokens(name: string, tokens: number, { capacity }: RateLimitPolicy) {
  if (!Number.isInteger(tokens) || tokens < 1 || tokens > capacity) {
    throw new RangeError(`rate limit ${name} must be an integer from 1 to ${capacity}, got ${tokens}`)
  }
}

function toResult(policy: RateLimitPolicy, cost: number, allowed: boolean, bucket: Bucket, now: number) {
  const { capacity, refillEvery } = policy
  // Another instance's clock may run ahead of ours: its refill point lies in our future.
  const lead = Math.max(0, bucket.at - now)
  const msToReach = (level: number) => (level <= bucket.level ? 0 : lead + Math.ceil((level - bucket.level) / capacity))
  return {
    allowed,
    limit: capacity,
    remaining: Math.floor(bucket.level / refillEvery),
    retryAfterMs: allowed ? 0 : msToReach(cost * refillEvery),
    resetMs: msToReach(capacity * refillEvery),
  } satisfies RateLimitResult
}

/** The bucket at `now`; a clock that went back (or lags another instance's) adds nothing. */
function refill(bucket: Bucket, { capacity, refillEvery }: RateLimitPolicy, now: number): Bucket {
  if (now <= bucket.at) {
    return bucket
  }
  const elapsed = Math.min(now - bucket.at, refillEvery)
  return { level: Math.min(capacity * refillEvery, bucket.level + elapsed * capacity), at: now }
}

function change(bucket: Bucket, policy: RateLimitPolicy, { kind, tokens }: Change): Outcome {
  const units = tokens * policy.refillEvery
  if (kind === 'give') {
    return {
      allowed: true,
      bucket: { ...bucket, level: Math.min(policy.capacity * policy.refillEvery, bucket.level + units) },
    }
  }
  if (bucket.level < units) {
    return { allowed: false, bucket }
  }
  return { allowed: true, bucket: { ...bucket, level: bucket.level - units } }
}

const sweepEvery = 60_000

function createMemoryStore(): BucketStore {
  const buckets = new Map<string, Bucket & { fullAt: number }>()
  let nextSweepAt = Number.NEGATIVE_INFINITY

  // A bucket that is full again is the same as no bucket, so idle keys are dropped rather than kept forever.
  function sweep(now: number) {
    if (now < nextSweepAt) {
      return
    }
    nextSweepAt = now + sweepEvery
    for (const [key, bucket] of buckets) {
      if (bucket.fullAt <= now) {
        buckets.delete(key)
      }
    }
  }

  return {
    async apply(key, policy, requested, now) {
      sweep(now)
      const full = policy.capacity * policy.refillEvery
      const stored = buckets.get(key)
      const outcome = change(refill(stored ?? { level: full, at: now }, policy, now), policy, requested)
      const { level, at } = outcome.bucket
      if (level >= full) {
        buckets.delete(key)
      } else {
        buckets.set(key, { level, at, fullAt: at + Math.ceil((full - level) / policy.capacity) })
      }
      return outcome
    },
    size: () => buckets.size,
  }
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
  kind: Change['kind'],
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
