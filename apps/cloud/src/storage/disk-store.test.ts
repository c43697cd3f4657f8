import { createHash, randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import path from 'node:path'
import type { UploadGrant } from '@relay/contracts'
import { freePort } from '@relay/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newCaller } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { databaseKinds } from '../../test/database.js'

/**
 * The presigned PUT as a load balancer would pass it on: sent to this instance's own port, with the
 * Host of the public address it was signed for (the signature covers it).
 */
function putThrough(port: number, grant: UploadGrant, body: Uint8Array): Promise<number> {
  const url = new URL(grant.uploadUrl)
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path: `${url.pathname}${url.search}`,
        headers: { ...grant.uploadHeaders, host: url.host, 'content-length': body.length },
        setHost: false,
        agent: false,
      },
      (response) => {
        response.resume()
        response.on('end', () => resolve(response.statusCode ?? 0))
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

/** The object files in the embedded store's folder (not its id file, not sidecars). */
function objectFiles(dataDir: string): string[] {
  const folder = path.join(dataDir, 'objects', 'relay-backups')
  try {
    return readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((name) => /[0-9a-f]{64}$/.test(name))
  } catch {
    return []
  }
}

describe.each(databaseKinds)('embedded store seen from its own instance, on %s', (kind) => {
  let cloud: TestCloud
  let publicUrl: string

  beforeAll(async () => {
    // Nothing listens at the public address: an instance that checked its files through it would fail.
    publicUrl = `http://127.0.0.1:${await freePort()}`
    cloud = await startTestCloud(kind, { env: { CLOUD_PUBLIC_URL: publicUrl, LOG_LEVEL: 'warn' } })
  })
  afterAll(async () => {
    await cloud?.close()
  })

  it('confirms and deletes an upload from disk while its public address is down', async () => {
    const user = await newCaller(cloud)
    const body = randomBytes(40_000)
    const sha256 = createHash('sha256').update(body).digest('hex')
    const requested = await user.call('POST', '/cloud-backups/request-upload', {
      filename: 'relay-backup.zip',
      backendId: 'backend-disk',
      uncompressedSize: body.length,
      compressedSize: body.length,
      sha256,
    })
    expect(requested.status).toBe(200)
    const grant = (await requested.json()) as UploadGrant
    expect(grant.uploadUrl.startsWith(`${publicUrl}/s3/`)).toBe(true)
    expect(await putThrough(Number(new URL(cloud.url).port), grant, body)).toBe(200)
    expect(objectFiles(cloud.database.dataDir)).toHaveLength(1)

    const completed = await user.call('POST', '/cloud-backups/complete-upload', {
      backupId: grant.backupId,
      actualCompressedSize: body.length,
    })
    expect(completed.status, await completed.clone().text()).toBe(200)
    expect(await completed.json()).toMatchObject({ backup: { status: 'completed', sha256 } })

    const removed = await user.call('DELETE', `/cloud-backups/${grant.backupId}`)
    expect(removed.status, await removed.clone().text()).toBe(200)
    expect(objectFiles(cloud.database.dataDir)).toEqual([])
  })

  it('still refuses, from disk, a confirmation when nothing was uploaded', async () => {
    const user = await newCaller(cloud)
    const announced = randomBytes(1000)
    const requested = await user.call('POST', '/cloud-backups/request-upload', {
      filename: 'relay-backup.zip',
      backendId: 'backend-disk-short',
      uncompressedSize: 2000,
      compressedSize: 2000,
      sha256: createHash('sha256').update(announced).digest('hex'),
    })
    const grant = (await requested.json()) as UploadGrant
    // Nothing was uploaded: the store's answer, read from the folder, is that there is no file.
    const completed = await user.call('POST', '/cloud-backups/complete-upload', {
      backupId: grant.backupId,
      actualCompressedSize: 2000,
    })
    expect(completed.status).toBe(409)
    expect(await completed.json()).toMatchObject({ error: expect.stringContaining('no uploaded file was found') })
  })
})
