import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { createTestClock, tempDir } from '@relay/testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../config.js'
import { createObjectStore } from './create-object-store.js'

describe('createObjectStore', () => {
  const clock = createTestClock()
  let dir: ReturnType<typeof tempDir>
  beforeEach(() => {
    dir = tempDir('relay-storage-')
  })
  afterEach(() => dir.remove())

  it('serves its own store by default, with credentials generated once and kept private', () => {
    const config = loadConfig({ CLOUD_DATA_DIR: dir.path, CLOUD_PUBLIC_URL: 'https://cloud.example.com' })
    const first = createObjectStore(config, { clock })
    const second = createObjectStore(config, { clock })
    first.store.close()
    second.store.close()

    const file = path.join(dir.path, 'storage', 'credentials.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(first.embedded?.options.credentials)
    expect(second.embedded?.options.credentials).toEqual(first.embedded?.options.credentials)
    expect(first.embedded?.options).toMatchObject({
      prefix: '/s3',
      objectsDir: path.join(dir.path, 'objects'),
      bucket: 'relay-backups',
      region: 'us-east-1',
    })
  })

  it('presigns embedded URLs at the public address', async () => {
    const config = loadConfig({ CLOUD_DATA_DIR: dir.path, CLOUD_PUBLIC_URL: 'https://cloud.example.com' })
    const { store } = createObjectStore(config, { clock })
    const { url } = await store.presignDownload('user-1/b.zip', { expiresInSeconds: 60 })
    store.close()
    expect(url).toMatch(/^https:\/\/cloud\.example\.com\/s3\/relay-backups\/user-1\/b\.zip\?/)
  })

  it('uses configured credentials for its own store', () => {
    const config = loadConfig({ CLOUD_DATA_DIR: dir.path, S3_ACCESS_KEY_ID: 'relay', S3_SECRET_ACCESS_KEY: 'secret' })
    const { store, embedded } = createObjectStore(config, { clock })
    store.close()
    expect(embedded?.options.credentials).toEqual({ accessKeyId: 'relay', secretAccessKey: 'secret' })
    expect(existsSync(path.join(dir.path, 'storage'))).toBe(false)
  })

  it('uses the external store when S3_ENDPOINT is set', async () => {
    const config = loadConfig({
      CLOUD_DATA_DIR: dir.path,
      S3_ENDPOINT: 'https://minio.internal:9000',
      S3_BUCKET: 'team-backups',
      S3_ACCESS_KEY_ID: 'relay',
      S3_SECRET_ACCESS_KEY: 'secret',
      S3_FORCE_PATH_STYLE: 'false',
    })
    const { store, embedded } = createObjectStore(config, { clock })
    const { url } = await store.presignDownload('user-1/b.zip', { expiresInSeconds: 60 })
    store.close()
    expect(embedded).toBeUndefined()
    expect(url).toMatch(/^https:\/\/team-backups\.minio\.internal:9000\/user-1\/b\.zip\?.*X-Amz-Credential=relay%2F/)
    expect(existsSync(path.join(dir.path, 'storage'))).toBe(false)
  })
})
