import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Clock } from '@relay/server-kit'
import type { CloudConfig } from '../config.js'
import { createDiskObjects } from './disk-objects.js'
import { createDiskObjectStore } from './disk-store.js'
import { type EmbeddedS3Options, embeddedS3Routes } from './embedded-store.js'
import type { ObjectStore } from './object-store.js'
import { createS3ObjectStore } from './s3-store.js'
import type { S3Credentials } from './sigv4-verifier.js'

/** Where the embedded endpoint is mounted in the cloud app. */
export const EMBEDDED_S3_PREFIX = '/s3'

export type ObjectStorage = {
  store: ObjectStore
  /** Present when the cloud serves its own store: register `plugin` with `options` (they carry the prefix). */
  embedded?: { plugin: typeof embeddedS3Routes; options: EmbeddedS3Options & { prefix: string } }
}

/**
 * The configured S3 store when `S3_ENDPOINT` is set; otherwise the cloud's own endpoint at
 * `<publicUrl>/s3` for clients, with objects in `<dataDir>/objects/` that the cloud reads and deletes
 * directly, and credentials from the configuration or generated once into `<dataDir>/storage/credentials.json`.
 */
export function createObjectStore(
  config: Pick<CloudConfig, 's3' | 'publicUrl' | 'dataDir'>,
  { clock }: { clock: Clock },
): ObjectStorage {
  const { s3 } = config
  if (s3.endpoint !== undefined) {
    return { store: createS3ObjectStore({ ...s3, endpoint: s3.endpoint, clock }) }
  }
  const credentials =
    s3.accessKeyId !== undefined && s3.secretAccessKey !== undefined
      ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }
      : loadOrCreateCredentials(path.join(config.dataDir, 'storage', 'credentials.json'))
  const presigner = createS3ObjectStore({
    endpoint: `${config.publicUrl}${EMBEDDED_S3_PREFIX}`,
    bucket: s3.bucket,
    region: s3.region,
    ...credentials,
    forcePathStyle: true,
    clock,
  })
  const options = {
    prefix: EMBEDDED_S3_PREFIX,
    objectsDir: embeddedObjectsDir(config),
    bucket: s3.bucket,
    region: s3.region,
    credentials,
    clock,
  }
  const objects = createDiskObjects(path.join(options.objectsDir, s3.bucket))
  return { store: createDiskObjectStore({ objects, presigner }), embedded: { plugin: embeddedS3Routes, options } }
}

/** The embedded store's folder; its endpoint keeps each bucket in a folder of its own under it. */
export function embeddedObjectsDir(config: Pick<CloudConfig, 'dataDir'>): string {
  return path.join(config.dataDir, 'objects')
}

/** Read once at startup, synchronously, so that services can be built without awaiting. */
function loadOrCreateCredentials(file: string): S3Credentials {
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Partial<S3Credentials>
    if (typeof saved.accessKeyId !== 'string' || typeof saved.secretAccessKey !== 'string') {
      throw new Error(`${file} must hold accessKeyId and secretAccessKey`)
    }
    return { accessKeyId: saved.accessKeyId, secretAccessKey: saved.secretAccessKey }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw err
    }
  }
  const credentials = {
    accessKeyId: `RELAY${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64url'),
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  try {
    // `wx`: when two processes start at once, the second reads what the first wrote.
    writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'wx' })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      return loadOrCreateCredentials(file)
    }
    throw err
  }
  return credentials
}
