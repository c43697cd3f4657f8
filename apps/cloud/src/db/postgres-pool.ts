import type { PostgresPool } from 'kysely'
import pg from 'pg'

type PoolLog = { warn(obj: object, msg: string): void }

/** How long a request waits for a new PostgreSQL connection before it fails with 503. */
export const CONNECT_TIMEOUT_MS = 5000

export type FaultAwarePool = PostgresPool & {
  /** Call when a statement lost its connection: every connection opened before now is dropped unused. */
  connectionLost(): void
}

/**
 * A `pg` pool that survives connections dying under it.
 *
 * - pg-pool listens for errors only on idle clients: a connection that drops while Kysely holds it
 *   would emit 'error' to no one, which ends the process. Every client gets a listener of its own.
 * - When one connection is lost (a server restart, `pg_terminate_backend`, a network cut) the idle
 *   ones usually went with it, but the pool learns so only when their sockets are next read. After
 *   `connectionLost()` each connection older than the failure is closed at its next checkout instead
 *   of being lent, so a retried statement lands on a new connection.
 */
export function openPostgresPool(connectionString: string, log: PoolLog): FaultAwarePool {
  const pool = new pg.Pool({ connectionString, max: 10, connectionTimeoutMillis: CONNECT_TIMEOUT_MS })
  const generationOf = new WeakMap<pg.PoolClient, number>()
  let generation = 0
  pool.on('connect', (client) => {
    generationOf.set(client, generation)
    client.on('error', (err) => log.warn({ err: err.message }, 'database connection lost'))
  })
  // The client's own listener above has reported it, and the pool has already discarded the client.
  pool.on('error', () => {})
  return {
    async connect() {
      for (;;) {
        const client = await pool.connect()
        if (generationOf.get(client) === generation) {
          return client
        }
        // Released with an error, pg-pool closes the client rather than keeping it.
        client.release(new Error('opened before the last lost connection'))
      }
    },
    end: () => pool.end(),
    connectionLost() {
      generation++
    },
  }
}
