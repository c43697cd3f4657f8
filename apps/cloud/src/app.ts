import { HOUR } from '@relay/contracts'
import {
  type Clock,
  createHttpServer,
  createSignInThrottle,
  every,
  migrateAtStartup,
  packageVersion,
  type RateLimitPolicy,
  systemClock,
} from '@relay/server-kit'
import { accountPageRoutes, createAccountPage } from './account-page/index.js'
import { guardRoutes } from './auth/guard.js'
import { accountRoutes } from './auth/routes.js'
import { createTokenVerifier } from './auth/tokens.js'
import { backupRoutes } from './backups/routes.js'
import { type BackupJobSchedule, scheduleBackupJobs } from './backups/schedule.js'
import type { CloudConfig } from './config.js'
import { type CloudDatabase, openDatabase } from './db/database.js'
import { migrations } from './db/migrations/index.js'
import { seedDemoAccount } from './directory/demo-account.js'
import { healthRoutes } from './health/routes.js'
import { pruneExpiredArtifacts } from './oauth/adapter.js'
import { oauthRoutes } from './oauth/routes.js'
import { createOAuthServer } from './oauth/server.js'
import { isInteractionOpen, signInLimits } from './oauth/sign-in.js'
import { paymentRoutes } from './payments/routes.js'
import { limitPerUser, type RateLimitPolicyName } from './rate-limit/hook.js'
import { closeRedis, connectRedis, type Redis } from './redis.js'
import { registrationRoutes } from './registration/routes.js'
import { createCloudServices } from './services.js'
import { checkObjectStore } from './storage/store-identity.js'

export type CloudOverrides = {
  /** An already opened database; the app migrates it but does not close it. */
  database?: CloudDatabase
  clock?: Clock
  /** Where log lines go instead of stdout (tests read them). */
  logStream?: { write(line: string): void }
  /** Prints the demo account's credentials; the console by default. */
  announce?: (message: string) => void
  /** Other token buckets than the spec's (load tests). */
  rateLimitPolicies?: Record<RateLimitPolicyName, RateLimitPolicy>
}

export const version = packageVersion(import.meta.url)

/** The composition root of the cloud service: everything is wired here with plain calls. */
export async function createApp(config: CloudConfig, overrides: CloudOverrides = {}) {
  const app = createHttpServer({
    logger: { level: config.logLevel, pretty: config.prettyLogs, stream: overrides.logStream },
  })
  const database = overrides.database ?? (await openDatabase(config, app.log))
  if (!overrides.database) {
    app.addHook('onClose', () => database.close())
  }
  await migrateAtStartup(app, database.db, migrations)
  // Before anything is served: an instance whose object store is not the database's one is refused.
  await checkObjectStore(database.db, config, overrides.clock ?? systemClock).catch(async (err: unknown) => {
    await app.close()
    throw err
  })
  // Waits a moment for Redis, never longer: without it the cloud starts and runs degraded (see redis.ts).
  const redis: Redis | undefined = config.redisUrl ? await connectRedis(config.redisUrl, { log: app.log }) : undefined
  if (redis) {
    app.addHook('onClose', () => closeRedis(redis))
  }
  const clock = overrides.clock ?? systemClock
  const services = createCloudServices({ config, database, clock, redis, log: app.log })
  app.addHook('onClose', async () => {
    services.storage.store.close()
    await services.close()
  })
  const { directory, tokens } = services
  if (config.demoAccount) {
    // PGlite runs LISTEN outside the query queue: let it finish before the seeding transaction.
    await services.licenses.ready()
    const demo = await seedDemoAccount(directory, services.licenses)
    if (demo) {
      // Straight to the console, never the log: the password is shown this once and kept nowhere.
      ;(overrides.announce ?? console.log)(
        `Demo cloud account created (gifted Pro license): ${demo.email} / ${demo.password}\n` +
          'This password is shown only now.',
      )
    }
  }
  const { limiter } = services
  // At the root and before any plugin, so that every route registered below, in any scope, is behind
  // them: a route is private unless its definition says otherwise. The limiter keys by the guard's principal.
  guardRoutes(app, createTokenVerifier(tokens))
  limitPerUser(app, limiter, overrides.rateLimitPolicies)

  await app.register(healthRoutes, {
    database,
    redis,
    store: services.storage.store,
    version,
    startedAt: performance.now(),
  })
  if (services.storage.embedded) {
    const { plugin, options } = services.storage.embedded
    await app.register(plugin, { ...options, canWrite: services.backups.acceptsUpload })
  }
  await app.register(paymentRoutes, { payments: services.payments })

  const oauth = createOAuthServer({ ...tokens, db: database.db, directory })
  await oauth.provider()
  const throttle = createSignInThrottle({ limits: signInLimits, clock, buckets: limiter })
  await app.register(oauthRoutes, { oauth, directory, throttle })
  await app.register(registrationRoutes, {
    registration: services.registration,
    publicUrl: config.publicUrl,
    interactionOpen: (uid) => isInteractionOpen(oauth, uid),
  })
  const accountPage = createAccountPage({ config, services, db: database.db, throttle, log: app.log })
  await app.register(accountPageRoutes, accountPage)

  // Expired sessions, codes and refresh tokens read as missing at once; this removes their rows.
  const jobs = new AbortController()
  let backupJobs: BackupJobSchedule | undefined
  app.addHook('onReady', async () => {
    every(HOUR, () => pruneExpiredArtifacts(database.db, clock, app.log), { log: app.log, signal: jobs.signal })
    every(HOUR, () => services.registration.pruneExpiredLinks(), { log: app.log, signal: jobs.signal })
    every(HOUR, () => accountPage.sessions.pruneExpired(), { log: app.log, signal: jobs.signal })
    // After the license listener is set up: on PGlite a LISTEN issued inside a job's transaction would go with it.
    await services.licenses.ready()
    backupJobs = scheduleBackupJobs({
      db: database.db,
      store: services.backups.store,
      clock,
      log: app.log,
      afterRun: services.backups.forgetRecent,
    })
  })
  app.addHook('onClose', async () => jobs.abort())
  // Before onClose, which closes the database: a job run under way finishes first.
  app.addHook('preClose', async () => backupJobs?.stop())

  await app.register(accountRoutes, { account: services.account })
  await app.register(backupRoutes, { backups: services.backups })
  return Object.assign(app, { services, oauth })
}

export type CloudApp = Awaited<ReturnType<typeof createApp>>
