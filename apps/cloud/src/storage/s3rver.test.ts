import { createHash, randomBytes } from 'node:crypto'
import { MB } from '@relay/contracts'
import { systemClock } from '@relay/server-kit'
import { tempDir } from '@relay/testkit'
import S3rver from 's3rver'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ObjectStore } from './object-store.js'
import { createS3ObjectStore } from './s3-store.js'

// s3rver is an independent S3 emulator. It is lenient, so only the positive flow is checked here;
// the refusals are tested against the embedded endpoint, which is strict.
describe('S3 store against s3rver', () => {
  const dir = tempDir('relay-s3rver-')
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory: dir.path,
    silent: true,
    configureBuckets: [{ name: 'relay-backups' }],
  })
  let store: ObjectStore

  beforeAll(async () => {
    const { port } = await server.run()
    store = createS3ObjectStore({
      endpoint: `http://127.0.0.1:${port}`,
      bucket: 'relay-backups',
      region: 'us-east-1',
      // s3rver's fixed credentials.
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      // s3rver checks expiry against its own wall clock.
      clock: systemClock,
    })
  })
  afterAll(async () => {
    store?.close()
    await server.close()
    dir.remove()
  })

  it.each([
    ['without a pinned checksum', false],
    ['with a pinned checksum', true],
  ])('uploads, heads, downloads and deletes %s', async (_, pin) => {
    const key = `user-1/backend-1/${pin ? 'pinned' : 'plain'}.zip`
    const body = randomBytes(3 * MB)
    const sha256 = createHash('sha256').update(body).digest('hex')
    const upload = await store.presignUpload(key, {
      contentLength: body.length,
      sha256: pin ? sha256 : undefined,
      expiresInSeconds: 1800,
    })
    const put = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body })
    expect(put.status, await put.text()).toBe(200)

    const head = await store.head(key)
    expect(head?.size).toBe(body.length)
    // s3rver keeps no SHA-256 checksums; when a store reports one, it must be the right one.
    expect([undefined, sha256]).toContain(head?.sha256)

    const download = await store.presignDownload(key, { expiresInSeconds: 1800, filename: 'backup.zip' })
    const get = await fetch(download.url)
    expect(get.status).toBe(200)
    expect(get.headers.get('content-disposition')).toContain('attachment; filename="backup.zip"')
    expect(Buffer.from(await get.arrayBuffer()).equals(body)).toBe(true)

    await store.delete([key])
    expect(await store.head(key)).toBeUndefined()
    await expect(store.delete([key])).resolves.toBeUndefined()
  })
})
