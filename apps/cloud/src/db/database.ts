import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import type { DatabaseHealth } from '@relay/contracts'
import { coalesce, pingDatabase } from '@relay/server-kit'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { PGliteDialect } from './pglite-dialect.js'
import type { CloudDB } from './schema.js'

export type CloudDatabase = {
  db: Kysely<CloudDB>
  driver: 'pglite' | 'postgres'
  ping(): Promise<DatabaseHealth>
  close(): Promise<void>
}

export type DatabaseOptions = { databaseUrl: string | undefined; dataDir: string }

/** PostgreSQL when a URL is given, otherwise PGlite in `<dataDir>/pglite`. */
export async function openDatabase({ databaseUrl, dataDir }: DatabaseOptions): Promise<CloudDatabase> {
  if (databaseUrl) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 })
    return wrap(new Kysely<CloudDB>({ dialect: new PostgresDialect({ pool }) }), 'postgres')
  }
  const folder = path.join(dataDir, 'pglite')
  await mkdir(folder, { recursive: true })
  const pglite = await PGlite.create(folder)
  const db = new Kysely<CloudDB>({ dialect: new PGliteDialect(pglite) })
  return wrap(db, 'pglite', () => pglite.close())
}

function wrap(db: Kysely<CloudDB>, driver: CloudDatabase['driver'], closeDriver?: () => Promise<void>): CloudDatabase {
  return {
    db,
    driver,
    ping: coalesce(() => pingDatabase(driver, () => sql`select 1`.execute(db))),
    async close() {
      await db.destroy()
      await closeDriver?.()
    },
  }
}
