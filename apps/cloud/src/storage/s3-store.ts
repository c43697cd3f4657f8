import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { SECOND } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { ObjectStore, PresignedRequest } from './object-store.js'

export type S3StoreOptions = {
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
  forcePathStyle: boolean
  clock: Clock
}

const OCTET_STREAM = 'application/octet-stream'
const MAX_EXPIRES_SECONDS = 7 * 24 * 60 * 60
const DELETE_CONCURRENCY = 8

/** An ObjectStore on any S3-compatible endpoint, through the AWS SDK v3. */
export function createS3ObjectStore({
  endpoint,
  bucket,
  region,
  accessKeyId,
  secretAccessKey,
  forcePathStyle,
  clock,
}: S3StoreOptions): ObjectStore {
  const client = new S3Client({
    endpoint,
    region,
    forcePathStyle,
    credentials: { accessKeyId, secretAccessKey },
    // Since 3.729 the SDK adds CRC32 checksums to every request by default, which many
    // S3-compatible stores refuse; send checksums only where the API requires or we pin one.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })

  // The SDK signs its own requests with Date.now() plus this offset; keeping it on our clock makes a
  // test clock and the embedded endpoint's skew check agree.
  function syncClock() {
    client.config.systemClockOffset = clock.now().getTime() - Date.now()
  }

  function expiry(signingDate: Date, expiresInSeconds: number): Date {
    if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_EXPIRES_SECONDS) {
      throw new RangeError(`expiresInSeconds must be 1 to ${MAX_EXPIRES_SECONDS}, got ${expiresInSeconds}`)
    }
    return new Date(signingDate.getTime() + expiresInSeconds * SECOND)
  }

  return {
    async presignUpload(key, { contentLength, sha256, expiresInSeconds }): Promise<PresignedRequest> {
      if (sha256 !== undefined && !/^[0-9a-f]{64}$/i.test(sha256)) {
        throw new TypeError('sha256 must be 64 hex digits')
      }
      const checksum = sha256 === undefined ? undefined : Buffer.from(sha256, 'hex').toString('base64')
      const signingDate = clock.now()
      const expiresAt = expiry(signingDate, expiresInSeconds)
      const command = new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        ContentLength: contentLength,
        ContentType: OCTET_STREAM,
        ChecksumSHA256: checksum,
      })
      const url = await getSignedUrl(client, command, {
        expiresIn: expiresInSeconds,
        signingDate,
        // The presigner leaves Content-Type unsigned and would hoist the checksum into the query,
        // where S3 does not check it against the body: keep all three as signed headers.
        signableHeaders: new Set(['content-type', 'content-length']),
        unhoistableHeaders: new Set(['x-amz-checksum-sha256']),
      })
      const headers: Record<string, string> = { 'content-type': OCTET_STREAM }
      if (checksum) {
        headers['x-amz-checksum-sha256'] = checksum
      }
      return { url, headers, expiresAt }
    },

    async presignDownload(key, { expiresInSeconds, filename }): Promise<PresignedRequest> {
      const signingDate = clock.now()
      const expiresAt = expiry(signingDate, expiresInSeconds)
      const command = new GetObjectCommand({
        Bucket: bucket,
        Key: key,
        ResponseContentDisposition: filename === undefined ? undefined : attachment(filename),
      })
      const url = await getSignedUrl(client, command, { expiresIn: expiresInSeconds, signingDate })
      return { url, headers: {}, expiresAt }
    },

    async head(key) {
      syncClock()
      try {
        const object = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }))
        return { size: object.ContentLength ?? 0, sha256: sha256Hex(object.ChecksumSHA256) }
      } catch (err) {
        if (isNotFound(err)) {
          return undefined
        }
        throw err
      }
    },

    async delete(keys) {
      // One DeleteObject per key: DeleteObjects needs a body checksum that S3-compatible stores disagree on.
      for (let at = 0; at < keys.length; at += DELETE_CONCURRENCY) {
        syncClock()
        await Promise.all(
          keys.slice(at, at + DELETE_CONCURRENCY).map(async (key) => {
            try {
              await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }))
            } catch (err) {
              if (!isNotFound(err)) {
                throw err
              }
            }
          }),
        )
      }
    },

    close() {
      client.destroy()
    },
  }
}

/** A full-object SHA-256 as hex; a multipart upload's composite checksum (`…-N`) is not one. */
function sha256Hex(checksum: string | undefined): string | undefined {
  return checksum && /^[A-Za-z0-9+/]{43}=$/.test(checksum) ? Buffer.from(checksum, 'base64').toString('hex') : undefined
}

function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404
}

/** RFC 6266: a plain ASCII fallback for old clients, the exact name in `filename*`. */
function attachment(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_')
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`
}
