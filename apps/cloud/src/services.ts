import { type Clock, systemClock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { CloudConfig } from './config.js'
import type { CloudDatabase } from './db/database.js'
import { createUserDirectory } from './directory/service.js'
import { createMemoryLicenseCache, createRedisLicenseCache } from './licenses/cache.js'
import { createLicenseService } from './licenses/service.js'
import { createKeyRing } from './oauth/keys.js'
import { oauthPrefix } from './oauth/provider.js'
import { createPaymentService } from './payments/service.js'
import type { Redis } from './redis.js'

export type ServiceDeps = {
  config: CloudConfig
  database: CloudDatabase
  clock?: Clock
  /** Shared caches and rate limits; in memory per process without it. */
  redis?: Redis
  log?: FastifyBaseLogger
}

/** The cloud's services, built the same way for the HTTP app and the admin CLI. */
export function createCloudServices({ config, database, clock = systemClock, redis, log }: ServiceDeps) {
  const { db } = database
  const directory = createUserDirectory({ db })
  const tokens = {
    issuer: `${config.publicUrl}${oauthPrefix}`,
    /** The cloud API's resource identifier: the `aud` of its access tokens. */
    audience: config.publicUrl,
    keyRing: createKeyRing({ db, clock }),
    clock,
  }
  // A Redis cache is shared, so a change deletes the one entry every instance reads. A per-process cache
  // also has to hear other processes' changes (NOTIFY), or it would answer from a stale entry for up to 4 h.
  const licenses = createLicenseService({
    db,
    clock,
    log,
    cache: redis ? createRedisLicenseCache({ redis, clock }) : createMemoryLicenseCache({ clock }),
    listen: redis ? undefined : database.listen,
  })
  const payments = createPaymentService({ licenses, directory, clock, webhookSecret: config.stripeWebhookSecret })
  return { clock, directory, tokens, licenses, payments, close: () => licenses.close() }
}

export type CloudServices = ReturnType<typeof createCloudServices>
