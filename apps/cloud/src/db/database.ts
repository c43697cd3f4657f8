import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { AppError, type DatabaseHealth } from '@relay/contracts'
import { coalesce, pingDatabase } from '@relay/server-kit'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { faultTolerant } from './connection-faults.js'
import { PGliteDialect } from './pglite-dialect.js'
import { CONNECT_TIMEOUT_MS, openPostgresPool } from './postgres-pool.js'
import type { CloudDB } from './schema.js'

export type CloudDatabase = {
  db: Kysely<CloudDB>
  driver: 'pglite' | 'postgres'
  ping(): Promise<DatabaseHealth>
  /**
   * Calls `onMessage` with each NOTIFY payload on `channel` until the returned stop function runs.
   * PostgreSQL listens on a dedicated connection (a pooled one would drop it) and reports its loss
   * through `onLost`; PGlite is one process, so its notifications reach only listeners in that process.
   */
  listen(
    channel: string,
    onMessage: (payload: string) => void,
    onLost: (err: Error) => void,
  ): Promise<() => Promise<void>>
  close(): Promise<void>
}

export type DatabaseOptions = { databaseUrl: string | undefined; dataDir: string }

type DatabaseLog = { warn(obj: object, msg: string): void }

/**
 * PostgreSQL when a URL is given, otherwise PGlite in `<dataDir>/pglite`. A lost connection fails
 * the statements that were using it (503 `UNAVAILABLE`, see connection-faults.ts), never the process.
 */
export async function openDatabase(
  { databaseUrl, dataDir }: DatabaseOptions,
  log: DatabaseLog = { warn() {} },
): Promise<CloudDatabase> {
  if (databaseUrl) {
    const pool = openPostgresPool(databaseUrl, log)
    const dialect = faultTolerant(new PostgresDialect({ pool }), {
      retryReads: true,
      onConnectionError: () => pool.connectionLost(),
    })
    const db = new Kysely<CloudDB>({ dialect })
    return wrap(db, 'postgres', (channel, onMessage, onLost) => listenPostgres(databaseUrl, channel, onMessage, onLost))
  }
  const folder = path.join(dataDir, 'pglite')
  await mkdir(folder, { recursive: true })
  const unlock = lockFolder(folder)
  const pglite = await PGlite.create(folder).catch((err) => {
    unlock()
    throw err
  })
  // One in-process connection: nothing to retry on, but a closed database still answers 503.
  const db = new Kysely<CloudDB>({ dialect: faultTolerant(new PGliteDialect(pglite), { retryReads: false }) })
  return wrap(
    db,
    'pglite',
    (channel, onMessage) => pglite.listen(channel, onMessage),
    () => pglite.close().finally(unlock),
  )
}

/**
 * PGlite is one process's database: a second process opening the same folder (the CLI while the
 * cloud runs) would corrupt it. A lock file with the owner's pid refuses that; a stale one is taken over.
 */
function lockFolder(folder: string): () => void {
  const file = path.join(folder, '..', 'pglite.lock')
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' })
      return () => rmSync(file, { force: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw err
      }
    }
    const owner = Number(readFileSync(file, 'utf8'))
    if (Number.isInteger(owner) && owner > 0 && isRunning(owner)) {
      throw new Error(
        `The embedded database in ${folder} is in use by process ${owner}${owner === process.pid ? ' (this one)' : ''}. ` +
          'Stop the cloud first, or run it on PostgreSQL (DATABASE_URL).',
      )
    }
    rmSync(file, { force: true })
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function wrap(
  db: Kysely<CloudDB>,
  driver: CloudDatabase['driver'],
  listen: CloudDatabase['listen'],
  closeDriver?: () => Promise<void>,
): CloudDatabase {
  return {
    db,
    driver,
    // A Kysely select, so a pooled connection found dead is replaced once before the ping fails.
    ping: coalesce(() =>
      pingDatabase(driver, () => db.selectNoFrom(sql<number>`1`.as('one')).execute().catch(throwCause)),
    ),
    listen,
    async close() {
      await db.destroy()
      await closeDriver?.()
    },
  }
}

/** Health reports name what failed (a refused connection, say), not the 503 sentence that wraps it. */
function throwCause(err: unknown): never {
  throw err instanceof AppError && err.cause instanceof Error ? err.cause : err
}

async function listenPostgres(
  connectionString: string,
  channel: string,
  onMessage: (payload: string) => void,
  onLost: (err: Error) => void,
): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS })
  // Reported once, and only for a connection that was up: a failed start rejects instead.
  let state: 'starting' | 'up' | 'done' = 'starting'
  const lost = (err: Error) => {
    if (state === 'up') {
      state = 'done'
      onLost(err)
      client.end().catch(() => {})
    }
  }
  client.on('notification', (message) => {
    if (message.channel === channel) {
      onMessage(message.payload ?? '')
    }
  })
  client.on('error', lost)
  client.on('end', () => lost(new Error('listener connection ended')))
  try {
    await client.connect()
    await client.query(`listen ${client.escapeIdentifier(channel)}`)
  } catch (err) {
    state = 'done'
    await client.end().catch(() => {})
    throw err
  }
  state = 'up'
  return async () => {
    if (state !== 'done') {
      state = 'done'
      await client.end()
    }
  }
}
