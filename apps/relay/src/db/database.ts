import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { DatabaseHealth } from '@relay/contracts'
import { pingDatabase } from '@relay/server-kit'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import type { RelayDB } from './schema.js'

export const databaseFile = 'relay.db'

export type RelayDatabase = {
  db: Kysely<RelayDB>
  /** The underlying connection, for what Kysely does not cover (backup API, pragmas). */
  sqlite: SQLite.Database
  file: string
  ping(): Promise<DatabaseHealth>
  close(): Promise<void>
}

/** Opens `<dataDir>/relay.db` in WAL mode. Writers wait up to 5 s for a lock instead of failing. */
export function openDatabase(dataDir: string): RelayDatabase {
  mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, databaseFile)
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('busy_timeout = 5000')
  sqlite.pragma('foreign_keys = ON')
  const db = new Kysely<RelayDB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) })
  const probe = sqlite.prepare('select 1')
  return {
    db,
    sqlite,
    file,
    ping: () => pingDatabase('sqlite', () => probe.get()),
    // Kysely's SqliteDialect closes the better-sqlite3 handle on destroy.
    close: () => db.destroy(),
  }
}

const statementCacheSize = 256

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running most of our
 * queries. Statements are reused by SQL text (parameters are bound per run), oldest dropped first.
 */
function withStatementCache(sqlite: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>()
  return {
    close: () => {
      cache.clear()
      sqlite.close()
    },
    prepare(sql: string) {
      let statement = cache.get(sql)
      if (statement) {
        cache.delete(sql)
      } else {
        statement = sqlite.prepare(sql)
        if (cache.size >= statementCacheSize) {
          cache.delete(cache.keys().next().value as string)
        }
      }
      cache.set(sql, statement)
      return statement
    },
  }
}
