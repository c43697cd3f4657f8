import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import path from 'node:path'
import type { DatabaseHealth } from '@relay/contracts'
import { pingDatabase } from '@relay/server-kit'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect, type Transaction } from 'kysely'
import type { RelayDB } from './schema.js'

export const databaseFile = 'relay.db'

/** Copies of the database taken just before a restore replaced it, beside the data. */
export const safetyCopiesFolder = 'pre-restore'

/**
 * Rows of the live database that belong to this machine's present rather than to a backup: a restore
 * takes them before the database is replaced and puts them into the restored one.
 */
export type HeldRows = { putBack(trx: Transaction<RelayDB>): Promise<void> }

/** Every row of `table` as it is now; `putBack` makes them the table's only rows. */
export async function holdRows(
  db: Kysely<RelayDB>,
  table: 'frontend_sessions' | 'unfinished_operations',
): Promise<HeldRows> {
  const rows = await db.selectFrom(table).selectAll().execute()
  return {
    async putBack(trx) {
      await trx.deleteFrom(table).execute()
      if (rows.length > 0) {
        await trx.insertInto(table).values(rows).execute()
      }
    },
  }
}

export type RelayDatabase = {
  db: Kysely<RelayDB>
  /** The connection in use now (a restore replaces it), for what Kysely does not cover. */
  readonly sqlite: SQLite.Database
  file: string
  ping(): Promise<DatabaseHealth>
  /**
   * Puts `stagedFile` in place of the database file and reopens the connection, while no query runs.
   * The staged file must be a complete SQLite database on the same file system.
   */
  replaceFile(stagedFile: string): Promise<void>
  close(): Promise<void>
}

function connect(file: string): SQLite.Database {
  const sqlite = new SQLite(file)
  try {
    sqlite.pragma('journal_mode = WAL')
    sqlite.pragma('synchronous = NORMAL')
    sqlite.pragma('busy_timeout = 5000')
    sqlite.pragma('foreign_keys = ON')
  } catch (err) {
    // A damaged file fails here (opening alone reads nothing); the handle must not outlive the error.
    sqlite.close()
    throw err
  }
  return sqlite
}

/** Opens `<dataDir>/relay.db` in WAL mode. Writers wait up to 5 s for a lock instead of failing. */
export function openDatabase(dataDir: string): RelayDatabase {
  mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, databaseFile)
  const connection = withStatementCache(connect(file))
  const db = new Kysely<RelayDB>({ dialect: new SqliteDialect({ database: connection }) })
  return {
    db,
    get sqlite() {
      return connection.current
    },
    file,
    ping: () => pingDatabase('sqlite', () => connection.prepare('select 1').get()),
    async replaceFile(stagedFile: string) {
      // Kysely has one connection: holding it keeps every other query waiting until the new file is open.
      await db.connection().execute(async () => {
        connection.current.close()
        // Closing the last connection checkpoints the WAL; what is left beside the file belongs to the
        // old database and must not be replayed into the new one.
        for (const suffix of ['-wal', '-shm']) {
          rmSync(`${file}${suffix}`, { force: true })
        }
        renameSync(stagedFile, file)
        connection.swap(connect(file))
      })
    },
    // Kysely's SqliteDialect closes the better-sqlite3 handle on destroy.
    close: () => db.destroy(),
  }
}

/** SQLite's codes for a file that is not a database at all, or one whose pages do not hold together. */
const damagedFileCodes = /^SQLITE_(NOTADB|CORRUPT)/

/** The SQLite error in `err` or its causes (a failed migration wraps it) that says the file is damaged. */
function damageIn(err: unknown): Error | undefined {
  for (let cause = err, depth = 0; cause instanceof Error && depth < 8; cause = cause.cause, depth++) {
    const { code } = cause as { code?: unknown }
    if (typeof code === 'string' && damagedFileCodes.test(code)) {
      return cause
    }
  }
  return undefined
}

/**
 * One sentence for the operator when the relay cannot start because `<dataDir>/relay.db` is damaged
 * (garbage, truncated, malformed): what is wrong, where, and how to get a working database back,
 * naming the safety copies that restores keep. Undefined when `err` is about something else.
 */
export function damagedDatabaseMessage(err: unknown, dataDir: string): string | undefined {
  const damage = damageIn(err)
  if (!damage) {
    return undefined
  }
  const file = path.resolve(dataDir, databaseFile)
  const copiesFolder = `${path.resolve(dataDir, safetyCopiesFolder)}${path.sep}`
  const newestCopy = safetyCopies(copiesFolder).at(-1)
  // A WAL file left beside it belongs to the damaged database and would be replayed into its replacement.
  const moveAside = `move ${databaseFile} and any ${databaseFile}-wal and ${databaseFile}-shm beside it out of the way`
  const problem = `The relay cannot start: its database ${file} is damaged (${damage.message})`
  return newestCopy
    ? `${problem}; safety copies taken before earlier restores are in ${copiesFolder} (newest ${newestCopy}): ${moveAside} and copy one of them in as ${databaseFile}, or start with an empty database and restore a cloud backup.`
    : `${problem}, and ${copiesFolder} holds no safety copies: ${moveAside} to start with an empty database, then restore a cloud backup.`
}

/** The database copies a restore keeps, oldest first (their names sort by time). */
export function safetyCopies(folder: string): string[] {
  try {
    return readdirSync(folder)
      .filter((name) => name.endsWith('.db'))
      .sort()
  } catch {
    return []
  }
}

const statementCacheSize = 256

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running most of our
 * queries. Statements are reused by SQL text (parameters are bound per run), oldest dropped first.
 * The handle behind it can be swapped (a restore), which drops the cache.
 */
function withStatementCache(initial: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>()
  let current = initial
  return {
    get current() {
      return current
    },
    swap(next: SQLite.Database) {
      cache.clear()
      current = next
    },
    close: () => {
      cache.clear()
      if (current.open) {
        current.close()
      }
    },
    prepare(sql: string) {
      let statement = cache.get(sql)
      if (statement) {
        cache.delete(sql)
      } else {
        statement = current.prepare(sql)
        if (cache.size >= statementCacheSize) {
          cache.delete(cache.keys().next().value as string)
        }
      }
      cache.set(sql, statement)
      return statement
    },
  }
}
