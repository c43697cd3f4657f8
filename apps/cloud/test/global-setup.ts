import { migrateToLatest } from '@relay/server-kit'
import { createDatabase, dropDatabase, postgresProblem, requirement, tempDir, uniqueDatabaseName } from '@relay/testkit'
import type { TestProject } from 'vitest/node'
import { openDatabase } from '../src/db/database.js'
import { migrations } from '../src/db/migrations/index.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated PGlite data folder; each test file works on its own copy. */
    pgliteTemplate: string
    /** A migrated PostgreSQL database to clone per test file, or null when none is available. */
    postgresTemplate: { url: string; name: string } | null
  }
}

/** Migrates one PGlite folder and one PostgreSQL template per run, instead of once per test. */
export default async function setup(project: TestProject) {
  const template = tempDir('relay-pglite-template-')
  const pglite = await openDatabase({ databaseUrl: undefined, dataDir: template.path })
  await migrateToLatest(pglite.db, migrations)
  await pglite.close()
  project.provide('pgliteTemplate', template.path)

  const url = process.env.TEST_DATABASE_URL
  const postgres = requirement('PostgreSQL', await postgresProblem(url))
  let postgresTemplate: { url: string; name: string } | null = null
  if (postgres.available && url) {
    const name = uniqueDatabaseName('relay_cloud_template')
    const database = await openDatabase({ databaseUrl: await createDatabase(url, name), dataDir: template.path })
    await migrateToLatest(database.db, migrations)
    await database.close()
    postgresTemplate = { url, name }
  }
  project.provide('postgresTemplate', postgresTemplate)

  return async () => {
    template.remove()
    if (postgresTemplate) {
      await dropDatabase(postgresTemplate.url, postgresTemplate.name)
    }
  }
}
