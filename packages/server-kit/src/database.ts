import type { DatabaseHealth } from '@relay/contracts'
import { type Kysely, type Migration, Migrator } from 'kysely'

type ClosableApp = { close(): Promise<unknown>; log: { info(obj: object, msg: string): void } }

/** Migrates at startup; a failed migration closes the half-built app before the error propagates. */
export async function migrateAtStartup<DB>(app: ClosableApp, db: Kysely<DB>, migrations: Record<string, Migration>) {
  try {
    const applied = await migrateToLatest(db, migrations)
    app.log.info({ applied }, 'database ready')
  } catch (err) {
    await app.close()
    throw err
  }
}

/**
 * Shares one in-flight call among concurrent callers: a burst of health checks costs one query,
 * and every answer is still fresh (nothing is cached once the call settles).
 */
export function coalesce<T>(call: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined
  return () => {
    inFlight ??= call().finally(() => {
      inFlight = undefined
    })
    return inFlight
  }
}

/** Brings a schema to its newest migration; Kysely's lock makes concurrent runs safe. */
export async function migrateToLatest<DB>(db: Kysely<DB>, migrations: Record<string, Migration>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    throw new Error(`database migration failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    })
  }
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName)
}

/** Times a trivial query; a failure is reported, not thrown, so health endpoints can answer 503. */
export async function pingDatabase(
  driver: DatabaseHealth['driver'],
  query: () => unknown | Promise<unknown>,
): Promise<DatabaseHealth> {
  const started = performance.now()
  const latencyMs = () => Math.round((performance.now() - started) * 100) / 100
  try {
    await query()
    return { ok: true, driver, latencyMs: latencyMs() }
  } catch (err) {
    return { ok: false, driver, latencyMs: latencyMs(), error: err instanceof Error ? err.message : String(err) }
  }
}

/** The common part of both health answers. */
export function healthReport(db: DatabaseHealth, version: string, startedAt: number) {
  return {
    status: db.ok ? ('ok' as const) : ('degraded' as const),
    version,
    uptimeSeconds: Math.round((performance.now() - startedAt) / 1000),
    db,
  }
}
