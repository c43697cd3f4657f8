import { type Clock, systemClock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import { createBrowserSessions } from './account-page/sessions.js'
import { createAccountService } from './auth/service.js'
import { cleanupBackups } from './backups/cleanup.js'
import { createBackupService } from './backups/service.js'
import type { CloudConfig } from './config.js'
import type { CloudDatabase } from './db/database.js'
import { createUserDirectory } from './directory/service.js'
import { createMemoryLicenseCache, createRedisLicenseCache } from './licenses/cache.js'
import { createLicenseService } from './licenses/service.js'
import { createMailer } from './mail/index.js'
import { createKeyRing } from './oauth/keys.js'
import { oauthPrefix } from './oauth/provider.js'
import { createPaymentService } from './payments/service.js'
import { createRateLimiter } from './rate-limit/limiter.js'
import type { Redis } from './redis.js'
import { createRegistrationService } from './registration/service.js'
import { createObjectStore } from './storage/create-object-store.js'

export type ServiceDeps = {
  config: CloudConfig
  database: CloudDatabase
  clock?: Clock
  /** Shared caches and rate limits; in memory per process without it. */
  redis?: Redis
  log?: FastifyBaseLogger
}

const quietLog = { info() {}, warn() {} }

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
  // also has to hear other processes' changes (NOTIFY), or it would answer from a stale entry for up to 4 h;
  // so does a shared one whose delete failed while Redis was out of reach of the process that made the change.
  const licenses = createLicenseService({
    db,
    clock,
    log,
    cache: redis ? createRedisLicenseCache({ redis, clock, log }) : createMemoryLicenseCache({ clock }),
    listen: database.listen,
  })
  const account = createAccountService({ db, directory, checkLicense: licenses.check, clock })
  /** Token buckets shared by every instance through Redis when there is one (sign-in, mail, per-user API limits). */
  const limiter = createRateLimiter({ clock, redis, prefix: 'relay-cloud:rate:', log })
  const browserSessions = createBrowserSessions({ db, clock })
  /** A password reset ends every way into the account: relays' grants, cloud sign-ins, account-page browsers. */
  const signOutEverywhere = async (accountId: string) =>
    (await account.revokeAllSessions(accountId)) + (await browserSessions.endAll(accountId))
  const mailer = createMailer(config, log ?? quietLog)
  const registration = createRegistrationService({
    db,
    directory,
    mailer,
    clock,
    publicUrl: config.publicUrl,
    revokeAllSessions: signOutEverywhere,
    limiter,
    log: log ?? quietLog,
  })
  const payments = createPaymentService({
    db,
    licenses,
    directory,
    clock,
    webhookSecret: config.stripeWebhookSecret,
    billing: config.billing,
    log,
  })
  const storage = createObjectStore(config, { clock })
  const backupLog = log ?? quietLog
  const backupService = createBackupService({ db, clock, store: storage.store, licenses, log: backupLog })
  const backups = {
    ...backupService,
    store: storage.store,
    /** The daily cleanup, also run on demand by `npm run cloud -- backups cleanup`. */
    async cleanup() {
      const result = await cleanupBackups({ db, store: storage.store, clock, log: backupLog })
      backupService.forgetRecent()
      return result
    },
  }
  return {
    clock,
    directory,
    tokens,
    account,
    browserSessions,
    limiter,
    mailer,
    registration,
    licenses,
    payments,
    storage,
    backups,
    close: () => licenses.close(),
  }
}

export type CloudServices = ReturnType<typeof createCloudServices>
