import { cpSync } from 'node:fs'
import { createDatabase, dropDatabase, tempDir, uniqueDatabaseName } from '@relay/testkit'
import { inject } from 'vitest'
import { type CloudDatabase, openDatabase } from '../src/db/database.js'

export type DatabaseKind = 'pglite' | 'postgres'

/** The kinds this run can test: PGlite always, PostgreSQL when the global setup found one. */
export const databaseKinds: DatabaseKind[] = inject('postgresTemplate') ? ['pglite', 'postgres'] : ['pglite']

export type TestDatabase = CloudDatabase & {
  dataDir: string
  /** The PostgreSQL connection string (undefined on PGlite): another instance opens its own pool on it. */
  url: string | undefined
  dispose(): Promise<void>
}

/** A migrated database of its own: a copy of the PGlite template, or a clone of the PostgreSQL one. */
export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  const folder = tempDir('relay-cloud-test-')
  if (kind === 'pglite') {
    cpSync(inject('pgliteTemplate'), folder.path, { recursive: true })
    const database = await openDatabase({ databaseUrl: undefined, dataDir: folder.path })
    return {
      ...database,
      dataDir: folder.path,
      url: undefined,
      async dispose() {
        await database.close()
        folder.remove()
      },
    }
  }
  const template = inject('postgresTemplate')
  if (!template) {
    throw new Error('no PostgreSQL template: TEST_DATABASE_URL is not available')
  }
  const name = uniqueDatabaseName('relay_cloud_test')
  const url = await createDatabase(template.url, name, template.name)
  const database = await openDatabase({ databaseUrl: url, dataDir: folder.path })
  return {
    ...database,
    dataDir: folder.path,
    url,
    async dispose() {
      await database.close()
      await dropDatabase(template.url, name)
      folder.remove()
    },
  }
}
