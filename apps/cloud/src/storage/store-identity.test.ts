import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { StartupError } from '@relay/server-kit'
import { tempDir } from '@relay/testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { testConfig } from '../../test/app.js'
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/database.js'
import { type CloudApp, createApp } from '../app.js'
import { runCli } from '../cli/run.js'
import { STORE_ID_FILE } from './store-identity.js'

const minio = { S3_ACCESS_KEY_ID: 'relay', S3_SECRET_ACCESS_KEY: 'secret' }
const sameStoreAdvice = /same object store: set S3_ENDPOINT, .* or give every instance the same CLOUD_DATA_DIR/

describe.each(databaseKinds)('one object store per database, on %s', (kind) => {
  let database: TestDatabase
  const apps: CloudApp[] = []
  const folders: ReturnType<typeof tempDir>[] = []

  /** Another instance on the same database, with its own data folder unless given one. */
  async function instance(env: Record<string, string> = {}, dataDir = otherFolder()): Promise<CloudApp> {
    const app = await createApp(testConfig(dataDir, env), { database })
    apps.push(app)
    return app
  }

  function otherFolder(): string {
    const folder = tempDir('relay-other-instance-')
    folders.push(folder)
    return folder.path
  }

  beforeEach(async () => {
    database = await createTestDatabase(kind)
  })
  afterEach(async () => {
    for (const app of apps.splice(0)) {
      await app.close()
    }
    await database.dispose()
    for (const folder of folders.splice(0)) {
      folder.remove()
    }
  })

  it('refuses a second instance whose embedded store is another folder, and accepts a shared one', async () => {
    await instance({}, database.dataDir)
    const id = readFileSync(path.join(database.dataDir, 'objects', STORE_ID_FILE), 'utf8').trim()
    expect(await database.db.selectFrom('object_store').select('identity').execute()).toEqual([
      { identity: `embedded ${id} relay-backups` },
    ])

    const elsewhere = otherFolder()
    const refused = instance({}, elsewhere)
    await expect(refused).rejects.toBeInstanceOf(StartupError)
    await expect(refused).rejects.toThrow(sameStoreAdvice)
    await expect(refused).rejects.toThrow(`the embedded store ${id}`)
    // The refused folder did not become a store of its own.
    expect(existsSync(path.join(elsewhere, 'objects', STORE_ID_FILE))).toBe(false)

    // The same folder, as a shared mount, is the same store: the instance starts.
    await expect(instance({}, database.dataDir)).resolves.toBeDefined()
  })

  it('refuses S3 on a database whose backups are in the embedded store, and the other way round', async () => {
    await instance({}, database.dataDir)
    await expect(instance({ ...minio, S3_ENDPOINT: 'https://minio.internal:9000' })).rejects.toThrow(
      /records the embedded store .* would use the S3 bucket "relay-backups" at https:\/\/minio\.internal:9000/,
    )

    await database.db.deleteFrom('object_store').execute()
    await instance({ ...minio, S3_ENDPOINT: 'https://minio.internal:9000/' })
    // The same store however its address is written; another bucket or endpoint is another store.
    await instance({ ...minio, S3_ENDPOINT: 'https://MINIO.internal:9000' })
    await expect(
      instance({ ...minio, S3_ENDPOINT: 'https://minio.internal:9000', S3_BUCKET: 'other-backups' }),
    ).rejects.toThrow(sameStoreAdvice)
    await expect(instance({ ...minio, S3_ENDPOINT: 'https://s3.example.com' })).rejects.toThrow(sameStoreAdvice)
    await expect(instance({}, otherFolder())).rejects.toThrow(
      /records the S3 bucket "relay-backups" at https:\/\/minio\.internal:9000; this instance would use the embedded store/,
    )
  })

  it('records exactly one store when two instances with different folders start at once', async () => {
    const results = await Promise.allSettled([instance({}, otherFolder()), instance({}, otherFolder())])
    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected'])
    expect(await database.db.selectFrom('object_store').selectAll().execute()).toHaveLength(1)
  })

  it("runs the CLI's cleanup, which deletes files, only on the database's store", async () => {
    await instance({}, database.dataDir)
    const cleanup = (dataDir: string) =>
      runCli(['backups', 'cleanup'], { config: testConfig(dataDir), out: () => {}, database })
    await expect(cleanup(otherFolder())).rejects.toThrow(sameStoreAdvice)
    expect(await cleanup(database.dataDir)).toBe(0)
  })

  it('refuses a damaged store id file instead of replacing it', async () => {
    const folder = otherFolder()
    await instance({}, folder)
    writeFileSync(path.join(folder, 'objects', STORE_ID_FILE), 'not an id\n')
    await expect(instance({}, folder)).rejects.toThrow(/\.store-id is damaged/)
    expect(readFileSync(path.join(folder, 'objects', STORE_ID_FILE), 'utf8')).toBe('not an id\n')
  })
})
