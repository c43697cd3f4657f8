import { AppError } from '@relay/contracts'
import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely'

export const UNAVAILABLE_MESSAGE = 'The database is briefly unavailable; try again shortly'

/** SQLSTATEs that mean the session is gone, not that the statement was wrong. */
const lostSessionStates = new Set(['57P01', '57P02', '57P03'])
const socketCodes = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])
/** What `pg`, `pg-pool`, Kysely and PGlite say when there is no usable connection (they carry no code). */
const lostConnectionMessage =
  /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect|Cannot use a pool after calling end|driver has already been destroyed|PGlite is clos)/

/**
 * Whether `err` says the connection failed (SQLSTATE class 08, an administrator or crash shutdown,
 * a dropped socket, a closed pool) rather than the statement: the same statement may work on
 * another connection a moment later.
 */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof AppError) {
    return false
  }
  if (!(err instanceof Error)) {
    return false
  }
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && (code.startsWith('08') || lostSessionStates.has(code) || socketCodes.has(code))) {
    return true
  }
  return lostConnectionMessage.test(err.message)
}

export function unavailable(cause: unknown): AppError {
  return new AppError('UNAVAILABLE', UNAVAILABLE_MESSAGE, { cause })
}

export type FaultTolerantOptions = {
  /** Re-run a failed read once on a fresh connection; false when there is only one connection (PGlite). */
  retryReads: boolean
  /** Told about each connection-level failure before anything is retried (the pool drops its older connections). */
  onConnectionError?: () => void
}

/**
 * Wraps a Kysely driver so that a lost connection costs one request, never the process:
 * - a read outside a transaction is re-run once on a fresh connection, since running it again
 *   cannot change anything;
 * - anything else (writes, raw SQL, every statement of a transaction) is not repeated, because the
 *   server may have applied it before the connection dropped; the caller gets `UNAVAILABLE` (503);
 * - a rollback on a dead connection is not an error: the server discards the transaction with the session.
 *
 * This is the one place that sees every statement together with whether a transaction is open:
 * Kysely checks clients out of the pool itself (so `pool.query` is never on its path) and a Kysely
 * plugin can rewrite a query or its result but cannot run it again.
 */
export class FaultTolerantDriver implements Driver {
  readonly #inner: Driver
  readonly #options: FaultTolerantOptions

  constructor(inner: Driver, options: FaultTolerantOptions) {
    this.#inner = inner
    this.#options = options
  }

  init(): Promise<void> {
    return this.#inner.init()
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new FaultTolerantConnection(await this.#guard(() => this.#inner.acquireConnection()), this)
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const own = connection as FaultTolerantConnection
    own.inTransaction = true
    await this.#guard(() => this.#inner.beginTransaction(own.inner, settings))
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const own = connection as FaultTolerantConnection
    try {
      await this.#guard(() => this.#inner.commitTransaction(own.inner))
    } finally {
      own.inTransaction = false
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const own = connection as FaultTolerantConnection
    try {
      await this.#inner.rollbackTransaction(own.inner)
    } catch (err) {
      if (!isConnectionError(err)) {
        throw err
      }
      this.#options.onConnectionError?.()
    } finally {
      own.inTransaction = false
    }
  }

  savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    return this.#savepointCommand('savepoint', connection, name, compileQuery)
  }

  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return this.#savepointCommand('rollbackToSavepoint', connection, name, compileQuery)
  }

  releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return this.#savepointCommand('releaseSavepoint', connection, name, compileQuery)
  }

  async #savepointCommand(
    command: 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint',
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    const own = connection as FaultTolerantConnection
    await this.#guard(async () => {
      await this.#inner[command]?.(own.inner, name, compileQuery)
    })
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    // `pg-pool` drops a client that saw a connection error instead of lending it again.
    return this.#inner.releaseConnection((connection as FaultTolerantConnection).inner)
  }

  destroy(): Promise<void> {
    return this.#inner.destroy()
  }

  /** Runs `query` on `connection`; a plain read whose connection was lost runs once more on a fresh one. */
  async execute<R>(connection: FaultTolerantConnection, query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await connection.inner.executeQuery<R>(query)
    } catch (err) {
      if (!isConnectionError(err)) {
        throw err
      }
      this.#options.onConnectionError?.()
      if (!this.#options.retryReads || connection.inTransaction || !isPlainRead(query)) {
        throw unavailable(err)
      }
    }
    return this.#guard(async () => {
      const fresh = await this.#inner.acquireConnection()
      try {
        return await fresh.executeQuery<R>(query)
      } finally {
        await this.#inner.releaseConnection(fresh)
      }
    })
  }

  async #guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (err) {
      if (!isConnectionError(err)) {
        throw err
      }
      this.#options.onConnectionError?.()
      throw unavailable(err)
    }
  }
}

class FaultTolerantConnection implements DatabaseConnection {
  readonly inner: DatabaseConnection
  readonly #driver: FaultTolerantDriver
  inTransaction = false

  constructor(inner: DatabaseConnection, driver: FaultTolerantDriver) {
    this.inner = inner
    this.#driver = driver
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#driver.execute<R>(this, query)
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize)
  }
}

/**
 * A select built with Kysely and without a `with` clause (which may hide a data-modifying statement).
 * Raw SQL is opaque (`select pg_notify(…)` has an effect), so it is never repeated.
 */
function isPlainRead(query: CompiledQuery): boolean {
  const node = query.query as { kind: string; with?: unknown }
  return node.kind === 'SelectQueryNode' && node.with === undefined
}

/** `dialect` with its driver wrapped in a `FaultTolerantDriver`. */
export function faultTolerant(dialect: Dialect, options: FaultTolerantOptions): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new FaultTolerantDriver(dialect.createDriver(), options),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  }
}
