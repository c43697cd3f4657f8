import { createHash, randomBytes, randomUUID } from 'node:crypto'
import type { TokenType, UploadGrant } from '@relay/contracts'
import { expect } from 'vitest'
import { mintAccessToken } from '../src/auth/tokens.js'
import type { TestCloud } from './cloud-server.js'

export type Caller = {
  id: string
  token: string
  call(method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<Response>
}

/** A new user of `cloud` (licensed unless told otherwise) with a token and a small HTTP client. */
export async function newCaller(
  cloud: TestCloud,
  options: { licensed?: boolean; type?: TokenType } = {},
): Promise<Caller> {
  const id = await cloud.addUser(`${randomUUID()}@example.com`, 'correct horse battery')
  if (options.licensed ?? true) {
    await cloud.app.services.licenses.setGifted(id, true)
  }
  const { token } = await mintAccessToken(cloud.app.services.tokens, {
    subject: options.type === 'device' ? `device-${id}` : id,
    type: options.type ?? 'user',
    lifetimeSeconds: 30 * 24 * 60 * 60,
  })
  return {
    id,
    token,
    call: (method, url, body) => callAs(cloud.url, token, method, url, body),
  }
}

export function callAs(base: string, token: string, method: string, url: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` }
  let payload: string | undefined
  if (body !== undefined) {
    headers['content-type'] = 'application/json'
    payload = typeof body === 'string' ? body : JSON.stringify(body)
  }
  return fetch(new URL(url, base), { method, headers, body: payload })
}

/** The upload a relay makes: the exact bytes, with the headers of the grant. */
export function putUpload(
  grant: { uploadUrl: string; uploadHeaders: Record<string, string> },
  body: Uint8Array<ArrayBuffer>,
) {
  return fetch(grant.uploadUrl, { method: 'PUT', headers: grant.uploadHeaders, body })
}

/**
 * One completed backup of `userId`, made through the backup API as a relay makes it: request the
 * upload, PUT the bytes, confirm. Returns its id, its key in the object store and the bytes.
 */
export async function uploadCompletedBackup(
  cloud: TestCloud,
  userId: string,
  backendId: string,
  { size = 3000, filename = `${backendId}-backup.zip` } = {},
) {
  const { token } = await mintAccessToken(cloud.app.services.tokens, {
    subject: userId,
    type: 'user',
    lifetimeSeconds: 3600,
  })
  const file = randomBytes(size)
  const requested = await callAs(cloud.url, token, 'POST', '/cloud-backups/request-upload', {
    filename,
    backendId,
    uncompressedSize: file.length,
    compressedSize: file.length,
    sha256: createHash('sha256').update(file).digest('hex'),
  })
  expect(requested.status).toBe(200)
  const grant = (await requested.json()) as UploadGrant
  expect((await putUpload(grant, file)).status).toBe(200)
  const done = await callAs(cloud.url, token, 'POST', '/cloud-backups/complete-upload', {
    backupId: grant.backupId,
    actualCompressedSize: file.length,
  })
  expect(done.status).toBe(200)
  return { id: grant.backupId, key: grant.s3Key, file }
}
