import { randomUUID } from 'node:crypto'
import { requirement } from '@relay/testkit'
import { openRedis, type Redis } from '../src/redis.js'

/** The Redis the tests use: TEST_REDIS_URL, or the local default. */
export const testRedisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

async function redisProblem(): Promise<string | undefined> {
  const redis = openRedis(testRedisUrl)
  redis.on('error', () => {})
  try {
    await redis.ping()
    return undefined
  } catch (err) {
    return `cannot reach ${testRedisUrl}: ${(err as Error).message}`
  } finally {
    redis.disconnect()
  }
}

/** Whether Redis tests run: skipped with a reason outside CI, a failure in CI. */
export const redisRequirement = requirement('Redis', await redisProblem())

export function connectTestRedis(): Redis {
  return openRedis(testRedisUrl)
}

/** A key prefix of its own, so tests sharing one Redis never see each other's keys. */
export function uniqueRedisPrefix(): string {
  return `relay-test:${randomUUID()}:`
}
