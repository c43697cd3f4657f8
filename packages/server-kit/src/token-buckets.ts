import type { Clock } from './clock.js'

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

export type RateLimiter = {
  /**
   * Refills the bucket for the time passed, then takes `cost` tokens if it holds them (nothing otherwise).
   * One bucket per key: include the policy's name in the key when one subject has several policies.
   */
  consume(key: string, policy: RateLimitPolicy, cost?: number): Promise<RateLimitResult>
  /** Gives tokens back, never beyond capacity, e.g. for a request that should not count. */
  refund(key: string, policy: RateLimitPolicy, amount?: number): Promise<void>
  /** Buckets held in this process's memory (always 0 with a shared store, where keys expire on their own). */
  bucketsInMemory(): number
}

/**
 * Levels are kept in units of 1/refillEvery token, so one ms adds exactly `capacity` units: integer arithmetic
 * in JavaScript and Lua alike, with no rounding drift between refills.
 */
export type Bucket = { level: number; at: number }
export type BucketChange = { kind: 'take' | 'give'; tokens: number }
export type BucketOutcome = { allowed: boolean; bucket: Bucket }

/** Where buckets live: this process's memory, or a store several processes share (Redis). */
export interface BucketStore {
  apply(key: string, policy: RateLimitPolicy, change: BucketChange, now: number): Promise<BucketOutcome>
  size(): number
}

export type TokenBucketsOptions = {
  clock: Clock
  /** Namespaces the buckets, e.g. `relay:rate:`. */
  prefix: string
  /** Buckets shared with other processes; each process keeps its own without it. */
  store?: BucketStore
}

/** Token-bucket rate limits (no fixed-window edge bursts). */
export function createTokenBuckets({
  clock,
  prefix,
  store = createMemoryBucketStore(),
}: TokenBucketsOptions): RateLimiter {
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

function change(bucket: Bucket, policy: RateLimitPolicy, { kind, tokens }: BucketChange): BucketOutcome {
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

/** Buckets in this process's memory. */
export function createMemoryBucketStore(): BucketStore {
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
