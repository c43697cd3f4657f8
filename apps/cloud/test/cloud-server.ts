import type { Clock } from '@relay/server-kit'
import { freePort } from '@relay/testkit'
import { type CloudApp, type CloudOverrides, createApp } from '../src/app.js'
import { testConfig } from './app.js'
import { createTestDatabase, type DatabaseKind, type TestDatabase } from './database.js'

export type TestCloud = {
  app: CloudApp
  /** The cloud's address, e.g. http://127.0.0.1:41234; the issuer is `${url}/oauth`. */
  url: string
  database: TestDatabase
  /** Every log line the app wrote. */
  logs: string[]
  addUser(email: string, password: string, name?: string): Promise<string>
  close(): Promise<void>
}

/** A cloud app listening on an ephemeral port over its own migrated database. */
export async function startTestCloud(
  kind: DatabaseKind,
  options: { env?: Record<string, string>; clock?: Clock; overrides?: CloudOverrides; database?: TestDatabase } = {},
): Promise<TestCloud> {
  const database = options.database ?? (await createTestDatabase(kind))
  const port = await freePort()
  const logs: string[] = []
  const config = testConfig(database.dataDir, { CLOUD_PORT: String(port), LOG_LEVEL: 'debug', ...options.env })
  const app = await createApp(config, {
    ...options.overrides,
    database,
    clock: options.clock,
    logStream: { write: (line) => void logs.push(line) },
  })
  await app.listen({ port, host: '127.0.0.1' })
  return {
    app,
    // Where this instance listens; CLOUD_PUBLIC_URL may name another (instances behind one address).
    url: `http://127.0.0.1:${port}`,
    database,
    logs,
    async addUser(email, password, name) {
      return (await app.services.directory.create({ email, password, name })).id
    },
    async close() {
      await app.close()
      if (!options.database) {
        await database.dispose()
      }
    },
  }
}
