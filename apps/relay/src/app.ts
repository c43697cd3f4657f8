import path from 'node:path'
import fastifyCookie from '@fastify/cookie'
import { backupSchedule, MINUTE, rateLimitPolicies } from '@relay/contracts'
import {
  type Clock,
  createHttpServer,
  createTokenBuckets,
  every,
  migrateAtStartup,
  migrateToLatest,
  packageVersion,
  type RateLimitPolicy,
  systemClock,
} from '@relay/server-kit'
import { loadAuthSettings } from './auth/auth-settings.js'
import { createFrontendSessions } from './auth/frontend-sessions.js'
import { addAuthGuard } from './auth/guard.js'
import { isLoopbackHost } from './auth/host.js'
import { createLocalUsers } from './auth/local-users.js'
import { authRoutes } from './auth/routes.js'
import { createAuthService } from './auth/service.js'
import { removeStaleTempFiles } from './backups/archive/index.js'
import { backupEncryptionRoutes } from './backups/encryption-routes.js'
import { createBackupPassphrase } from './backups/passphrase.js'
import { retentionRoutes } from './backups/retention/routes.js'
import { backupRoutes } from './backups/routes.js'
import { createBackupService } from './backups/service.js'
import { verificationRoutes } from './backups/verification/routes.js'
import { createCloudConnection } from './cloud-client/connection.js'
import type { RelayConfig } from './config.js'
import { dashboardStatsRoutes } from './dashboard/routes.js'
import { openDatabase, type RelayDatabase } from './db/database.js'
import { migrations } from './db/migrations/index.js'
import { featureFlagRoutes } from './feature-flags/routes.js'
import { createFeatureFlagService } from './feature-flags/service.js'
import { healthRoutes } from './health/routes.js'
import { healthAlertRoutes } from './health-alerts/routes.js'
import { createHealthAlerts } from './health-alerts/service.js'
import { itemLookup, warningCheck } from './health-alerts/warnings.js'
import { createHistoryQueries } from './health-history/query.js'
import { createHealthHistory } from './health-history/recorder.js'
import { healthHistoryRoutes } from './health-history/routes.js'
import { loadOrCreateIdentity } from './identity/identity.js'
import { notificationRoutes } from './notifications/routes.js'
import { createNotificationService } from './notifications/service.js'
import { loadOrCreateKey } from './secrets/secret-box.js'
import { createDrivers } from './sources/drivers/index.js'
import type { StreamPayload } from './sources/drivers/types.js'
import { createReach } from './sources/reach.js'
import { sourceRoutes } from './sources/routes.js'
import { createSourcesRuntime, type DriverFactories } from './sources/runtime.js'
import { createSourcesService } from './sources/service.js'
import { createWebSocketHub, webSocketHubRoutes, webSocketSupport } from './sources/websocket-hub.js'
import { serveWebUi, spaFallback } from './web/routes.js'

export type RelayOverrides = {
  /** An already opened database; the app migrates it but does not close it. */
  database?: RelayDatabase
  clock?: Clock
  /** Collector and stream drivers; the built-in ones by default. */
  drivers?: DriverFactories
  /** Where log lines go; stdout by default. */
  logStream?: { write(line: string): void }
  /** The dashboard reads' rate limit; the spec's 200 per 10 s by default. */
  dashboardRateLimit?: RateLimitPolicy
}

export const version = packageVersion(import.meta.url)

/** The composition root of the relay: everything is wired here with plain calls. */
export async function createApp(config: RelayConfig, overrides: RelayOverrides = {}) {
  const clock = overrides.clock ?? systemClock
  const app = createHttpServer({
    logger: { level: config.logLevel, pretty: config.prettyLogs, stream: overrides.logStream },
    notFound: spaFallback(config.webDir),
  })
  // Before any route: WebSocket upgrades must be handled by the root instance.
  await webSocketSupport(app)
  const identity = loadOrCreateIdentity(config.dataDir, clock.now())
  const database = overrides.database ?? openDatabase(config.dataDir)
  if (!overrides.database) {
    app.addHook('onClose', () => database.close())
  }
  // onClose hooks run in reverse order: background work registered below stops before the database closes.
  const jobs = new AbortController()
  app.addHook('onClose', async () => jobs.abort())
  app.log.info({ backendId: identity.backendId }, 'relay identity')
  await migrateAtStartup(app, database.db, migrations)
  const deps = { db: database.db, clock, log: app.log }
  const notifications = createNotificationService({ ...deps, log: app.log.child({ feature: 'notifications' }) })
  const featureFlags = createFeatureFlagService(deps)
  const secretKey = loadOrCreateKey(config.dataDir)
  const loopbackOnly = isLoopbackHost(config.host)
  const authSettings = await loadAuthSettings(deps)
  if (authSettings.get().mode === 'none' && !loopbackOnly && !config.allowOpenNetwork) {
    throw new Error(
      `The relay is in auth mode none and would listen on ${config.host}, open to anybody on the network. ` +
        'Start it on 127.0.0.1 and choose local or cloud sign-in, or set RELAY_ALLOW_OPEN_NETWORK=true.',
    )
  }
  const cloud = createCloudConnection({
    ...deps,
    log: app.log.child({ feature: 'cloud' }),
    cloudUrl: config.cloudUrl,
    backendId: identity.backendId,
    secretKey,
    notifications,
  })
  const sessions = createFrontendSessions(deps)
  const auth = createAuthService({
    settings: authSettings,
    localUsers: createLocalUsers(deps),
    sessions,
    cloud,
    notifications,
    log: app.log.child({ feature: 'auth' }),
    openModeAllowed: loopbackOnly || config.allowOpenNetwork,
  })
  const virtualStreams = new Map<string, StreamPayload>()
  const webSocketHub = createWebSocketHub()
  const reach = createReach({ allowLinkLocal: config.allowLinkLocal })
  const history = createHealthHistory({
    ...deps,
    log: app.log.child({ feature: 'health-history' }),
    // The runtime's settings, which the health-settings route updates; read only once it exists.
    retentionDays: async () => (await runtime.healthSettings.get()).historyRetentionDays,
  })
  // Runs after the runtime stopped (onClose hooks run in reverse order): its last outcomes are saved.
  app.addHook('onClose', () => history.flush())
  const alerts = createHealthAlerts({
    ...deps,
    // The runtime and the sources service, read only once they exist.
    hasWarning: warningCheck({ runtime: () => runtime, sources: () => sources }),
    itemExists: itemLookup(() => sources),
  })
  await alerts.load()
  const runtime = createSourcesRuntime({
    ...deps,
    log: app.log.child({ feature: 'sources' }),
    notifications,
    history,
    alerts,
    drivers:
      overrides.drivers ??
      createDrivers({ virtualSink: (streamId, payload) => virtualStreams.set(streamId, payload), webSocketHub, reach }),
  })
  app.addHook('onClose', () => runtime.close())
  const sources = createSourcesService({ ...deps, secretKey, runtime, reach, alerts })
  const resumeSources = () =>
    sources
      .resume((err, junction) => app.log.error({ err, junctionId: junction.id }, 'junction did not resume'))
      .catch((err: unknown) => app.log.error({ err }, 'sources did not resume'))

  const tempDir = path.join(config.dataDir, 'tmp')
  const stale = await removeStaleTempFiles(tempDir)
  if (stale.length > 0) {
    app.log.info({ files: stale }, 'removed work files of an interrupted backup or restore')
  }
  const backupPassphrase = createBackupPassphrase({ ...deps, secretKey, log: app.log.child({ feature: 'backups' }) })
  const backups = createBackupService({
    ...deps,
    log: app.log.child({ feature: 'backups' }),
    database,
    dataDir: config.dataDir,
    tempDir,
    backendId: identity.backendId,
    appVersion: version,
    schemaVersion: Object.keys(migrations).at(-1) ?? '',
    cloud,
    notifications,
    passphrase: backupPassphrase,
    restore: {
      secretKey,
      knownSchemaVersions: Object.keys(migrations),
      now: () => clock.now(),
      holdSignIns: () => auth.holdSignIns(),
      beforeSwap: async () => {
        await runtime.close()
        await history.flush()
      },
      migrate: async () => {
        await migrateToLatest(database.db, migrations)
      },
      reload: async () => {
        notifications.forgetCache()
        history.forget()
        sources.forgetStats()
        await alerts.load()
        await authSettings.reload()
        await resumeSources()
      },
    },
  })

  await backups.recoverInterrupted()
  // A backup or restore in progress finishes before the database closes.
  app.addHook('onClose', () => backups.idle())

  await app.register(fastifyCookie)
  addAuthGuard(app, { mode: auth.mode, sessions, cloud, loopbackOnly })
  await app.register(authRoutes, { auth, cloud })
  await app.register(backupRoutes, { backups })
  await app.register(backupEncryptionRoutes, { passphrase: backupPassphrase })
  await app.register(retentionRoutes, { retention: backups.retention })
  await app.register(verificationRoutes, { verification: backups.verification })
  await app.register(healthRoutes, { database, backendId: identity.backendId, version, startedAt: performance.now() })
  await app.register(notificationRoutes, { notifications })
  await app.register(featureFlagRoutes, { featureFlags })
  await app.register(sourceRoutes, { sources })
  await app.register(healthHistoryRoutes, { queries: createHistoryQueries({ ...deps, flush: history.flush }) })
  await app.register(healthAlertRoutes, { alerts })
  await app.register(dashboardStatsRoutes, {
    sources,
    alerts,
    clock,
    limiter: createTokenBuckets({ clock, prefix: 'dashboard:' }),
    policy: overrides.dashboardRateLimit ?? rateLimitPolicies.dashboard,
  })
  await app.register(webSocketHubRoutes, { hub: webSocketHub, getStream: (id) => sources.getStream(id) })

  app.addHook('onReady', async () => {
    // Sources that fail to resume are reported, but never keep the relay (and its UI) from starting.
    await resumeSources()
    void backups.releaseInterrupted()
    every(config.notificationMaintenanceEvery, notifications.maintain, {
      log: app.log,
      signal: jobs.signal,
      firstRunAfter: 0,
    })
    every(MINUTE, history.flush, { log: app.log, signal: jobs.signal })
    every(config.notificationMaintenanceEvery, history.prune, { log: app.log, signal: jobs.signal, firstRunAfter: 0 })
    every(backupSchedule.checkInterval, backups.runScheduledCycle, {
      log: app.log,
      signal: jobs.signal,
      firstRunAfter: backupSchedule.startupDelay,
    })
  })
  // On the root context, so the not-found handler can send index.html.
  await serveWebUi(app, config.webDir)
  return Object.assign(app, {
    services: {
      notifications,
      featureFlags,
      sources,
      runtime,
      alerts,
      virtualStreams,
      webSocketHub,
      auth,
      cloud,
      backups,
    },
  })
}

export type RelayApp = Awaited<ReturnType<typeof createApp>>
