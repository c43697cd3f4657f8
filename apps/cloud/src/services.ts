import { type Clock, systemClock } from '@relay/server-kit'
import type { CloudConfig } from './config.js'
import type { CloudDatabase } from './db/database.js'
import { createUserDirectory } from './directory/service.js'
import type { Redis } from './redis.js'

export type ServiceDeps = {
  config: CloudConfig
  database: CloudDatabase
  clock?: Clock
  /** Shared caches and rate limits; in memory per process without it. */
  redis?: Redis
}

/** The cloud's services, built the same way for the HTTP app and the admin CLI. */
export function createCloudServices({ database, clock = systemClock }: ServiceDeps) {
  const { db } = database
  const directory = createUserDirectory({ db })
  return { clock, directory }
}

export type CloudServices = ReturnType<typeof createCloudServices>
