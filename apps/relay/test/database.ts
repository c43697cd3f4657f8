import { migrateToLatest } from '@relay/server-kit'
import { tempDir } from '@relay/testkit'
import Fastify from 'fastify'
import { openDatabase, type RelayDatabase } from '../src/db/database.js'
import { migrations } from '../src/db/migrations/index.js'

/** A migrated SQLite database in a temp file of its own; `dispose()` closes and removes it. */
export async function createTestDatabase(): Promise<RelayDatabase & { dataDir: string; dispose(): Promise<void> }> {
  const folder = tempDir('relay-sqlite-')
  const database = openDatabase(folder.path)
  await migrateToLatest(database.db, migrations)
  return {
    ...database,
    dataDir: folder.path,
    async dispose() {
      await database.close()
      folder.remove()
    },
  }
}

/** A logger that writes nothing, for services under test. */
export const silentLog = Fastify({ logger: false }).log
