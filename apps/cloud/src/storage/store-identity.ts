import { randomUUID } from 'node:crypto'
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { type Clock, StartupError } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { CloudConfig } from '../config.js'
import type { CloudDB } from '../db/schema.js'
import { embeddedObjectsDir } from './create-object-store.js'

/** In the embedded store's folder: the random id that names this store, whichever path it is mounted at. */
export const STORE_ID_FILE = '.store-id'

type StoreIdentity = { identity: string; description: string }

/**
 * Makes sure this instance uses the object store that holds the database's backups. The first start on
 * a database records its store; every later start, on any instance, must find the same one, or it is
 * refused before it serves anything: an instance with a store of its own would accept uploads that the
 * others never find. An S3 store is named by its endpoint and bucket; an embedded one by the random id
 * in `<CLOUD_DATA_DIR>/objects/.store-id`, so instances that share that folder agree.
 */
export async function checkObjectStore(
  db: Kysely<CloudDB>,
  config: Pick<CloudConfig, 's3' | 'dataDir'>,
  clock: Clock,
): Promise<void> {
  let recorded = await recordedStore(db)
  let mine = await identify(config, { create: !recorded })
  if (!recorded && mine) {
    // Two first starts at once: the row is written once and the other instance compares with it.
    await db
      .insertInto('object_store')
      .values({ identity: mine.identity, description: mine.description, recorded_at: clock.now() })
      .onConflict((oc) => oc.column('singleton').doNothing())
      .execute()
    recorded = await recordedStore(db)
  }
  mine ??= { identity: '', description: `the embedded store in ${embeddedObjectsDir(config)}, which has no store id` }
  if (recorded && recorded.identity !== mine.identity) {
    throw new StartupError(
      `This instance's object store is not the one that holds this database's backups: the database ` +
        `records ${recorded.description}; this instance would use ${mine.description}. ` +
        'Every cloud instance on one database must use the same object store: set S3_ENDPOINT, S3_BUCKET, ' +
        'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY to one S3-compatible store on every instance, or give ' +
        'every instance the same CLOUD_DATA_DIR on a shared folder. If the backups were moved to this ' +
        'store on purpose, delete the row of the object_store table and start again.',
    )
  }
}

async function recordedStore(db: Kysely<CloudDB>): Promise<StoreIdentity | undefined> {
  return db.selectFrom('object_store').select(['identity', 'description']).executeTakeFirst()
}

/** This instance's store; an embedded folder without an id gets one only when `create` says so. */
async function identify(
  config: Pick<CloudConfig, 's3' | 'dataDir'>,
  { create }: { create: boolean },
): Promise<StoreIdentity | undefined> {
  const { s3 } = config
  if (s3.endpoint !== undefined) {
    const url = new URL(s3.endpoint)
    const endpoint = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`
    return { identity: `s3 ${endpoint} ${s3.bucket}`, description: `the S3 bucket "${s3.bucket}" at ${endpoint}` }
  }
  const folder = embeddedObjectsDir(config)
  const file = path.join(folder, STORE_ID_FILE)
  const id = (await readStoreId(file)) ?? (create ? await createStoreId(file) : undefined)
  if (id === undefined) {
    return undefined
  }
  return {
    identity: `embedded ${id} ${s3.bucket}`,
    description: `the embedded store ${id} (bucket "${s3.bucket}"), first set up in ${folder}`,
  }
}

async function readStoreId(file: string): Promise<string | undefined> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return undefined
    }
    throw err
  }
  const id = text.trim()
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) {
    throw new StartupError(`${file} is damaged: put back the id recorded in the database's object_store table`)
  }
  return id
}

/**
 * Written whole to a temporary file and linked into place: of instances creating it at once, one
 * wins, and the others read a complete id rather than an empty file.
 */
async function createStoreId(file: string): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true })
  const temp = `${file}.${randomUUID()}.tmp`
  await writeFile(temp, `${randomUUID()}\n`, { flag: 'wx' })
  try {
    await link(temp, file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw err
    }
  } finally {
    await rm(temp, { force: true })
  }
  const id = await readStoreId(file)
  if (!id) {
    throw new Error(`${file} vanished while it was being created`)
  }
  return id
}
