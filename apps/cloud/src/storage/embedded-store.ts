import path from 'node:path'
import { MB } from '@relay/contracts'
import type { Clock, HttpServer } from '@relay/server-kit'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { requestedRange, UnsatisfiableRange } from './byte-range.js'
import { createDiskObjects } from './disk-objects.js'
import { S3Error, s3ErrorXml } from './s3-error.js'
import { refuseUnsupported } from './s3-operations.js'
import { createSigV4Verifier, type S3Credentials } from './sigv4-verifier.js'

export type EmbeddedS3Options = {
  /** Objects live in `<objectsDir>/<bucket>/`. */
  objectsDir: string
  bucket: string
  region: string
  credentials: S3Credentials
  clock: Clock
  /** Largest object accepted; the backup size limit is enforced earlier, by the signed Content-Length. */
  maxObjectBytes?: number
  /**
   * Whether a PUT may write `key`, asked after its signature is checked; every key may be written
   * without it. A presigned URL stays valid for its whole lifetime, so this is what stops it once
   * the object it was made for is final.
   */
  canWrite?: (key: string) => Promise<boolean>
}

const OCTET_STREAM = 'application/octet-stream'
const MAX_KEY_BYTES = 1024

/**
 * A small S3-compatible endpoint for the embedded default: path-style `<prefix>/<bucket>/<key>`, object
 * PUT, GET (one byte range or all), HEAD and DELETE, every request signed with SigV4 (presigned URL or
 * Authorization header). Anything else S3 can do is answered `NotImplemented`, never with a success.
 * Register it with a prefix, unwrapped: its body parser and error handler must stay inside its scope.
 */
export async function embeddedS3Routes(app: HttpServer, options: EmbeddedS3Options) {
  const { bucket, clock, credentials, region, maxObjectBytes = 64 * MB, canWrite } = options
  const verifier = createSigV4Verifier({ credentials, region, clock })
  const objects = createDiskObjects(path.join(options.objectsDir, bucket))

  // Bodies are streamed to disk by the handler, after the signature is checked; no parser may buffer them.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, _payload, done) => done(null))

  // S3 clients correct their clock from this header after an error, so it must be the clock we check against.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('date', clock.now().toUTCString())
  })

  app.setErrorHandler((error: FastifyError | S3Error, request, reply) => {
    const s3Error = error instanceof S3Error ? error : asS3Error(error)
    if (s3Error.status >= 500) {
      request.log.error({ err: error }, 'object store request failed')
    } else {
      request.log.info({ code: s3Error.code, status: s3Error.status }, s3Error.message)
    }
    reply.code(s3Error.status).type('application/xml')
    if (s3Error instanceof UnsatisfiableRange) {
      reply.header('content-range', `bytes */${s3Error.size}`)
    }
    return reply.send(request.method === 'HEAD' ? undefined : s3ErrorXml(s3Error, pathOf(request.url)))
  })

  async function serve(request: FastifyRequest, reply: FastifyReply) {
    const { method } = request
    const queryAt = request.url.indexOf('?')
    refuseUnsupported(
      method,
      pathOf(request.url).slice(app.prefix.length),
      queryAt < 0 ? '' : request.url.slice(queryAt + 1),
      request.headers,
    )
    if (method !== 'GET' && method !== 'HEAD' && method !== 'PUT' && method !== 'DELETE') {
      throw new S3Error(405, 'MethodNotAllowed', `The specified method is not allowed against this resource`)
    }
    const { payloadSha256 } = await verifier.verify({ method, url: request.url, headers: request.headers })
    const key = objectKey(request.url, app.prefix, bucket)
    const withChecksum = request.headers['x-amz-checksum-mode'] === 'ENABLED'

    switch (method) {
      case 'PUT': {
        if (canWrite && !(await canWrite(key))) {
          throw new S3Error(403, 'AccessDenied', 'The object can no longer be written')
        }
        const size = contentLength(request, maxObjectBytes)
        const pinned = pinnedSha256(request)
        if (pinned !== undefined && payloadSha256 !== undefined && pinned !== payloadSha256) {
          throw new S3Error(400, 'BadDigest', 'x-amz-checksum-sha256 and x-amz-content-sha256 disagree')
        }
        const sha256 = await objects.write(key, request.raw, { size, sha256: pinned ?? payloadSha256 }).catch((err) => {
          // The client went away mid-body: the temporary file is already gone.
          if (!(err instanceof S3Error) && request.raw.readableAborted) {
            throw new S3Error(400, 'IncompleteBody', 'The upload ended before Content-Length bytes arrived')
          }
          throw err
        })
        return reply
          .header('etag', `"${sha256}"`)
          .header('x-amz-checksum-sha256', Buffer.from(sha256, 'hex').toString('base64'))
          .send()
      }
      case 'GET':
      case 'HEAD': {
        const range = requestedRange(rangeHeader(request))
        const object = method === 'GET' ? await objects.read(key, range) : await objects.stat(key, range)
        if (!object) {
          throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.')
        }
        const span = object.range
        reply
          .type(OCTET_STREAM)
          .header('accept-ranges', 'bytes')
          .header('content-length', span ? span.end - span.start + 1 : object.size)
          .header('last-modified', object.modified.toUTCString())
        if (span) {
          reply.code(206).header('content-range', `bytes ${span.start}-${span.end}/${object.size}`)
        }
        if (object.sha256) {
          reply.header('etag', `"${object.sha256}"`)
          // The stored checksum is the whole object's: a part of it has none.
          if (withChecksum && !span) {
            reply.header('x-amz-checksum-sha256', Buffer.from(object.sha256, 'hex').toString('base64'))
          }
        }
        // Query parameters are covered by the signature, so only the signer can choose this header.
        const disposition = (request.query as Record<string, unknown>)['response-content-disposition']
        if (typeof disposition === 'string') {
          reply.header('content-disposition', disposition)
        }
        return reply.send('body' in object ? object.body : undefined)
      }
      case 'DELETE':
        await objects.remove(key)
        return reply.code(204).send()
      default:
        return method satisfies never
    }
  }

  // Public to the access-token guard: every request here is authenticated by its SigV4 signature instead.
  app.all('/*', { bodyLimit: maxObjectBytes, config: { public: true } }, serve)
  // `/*` leaves out the endpoint's root `<prefix>/`, where S3 clients list buckets: that is answered too.
  app.all('/', { bodyLimit: maxObjectBytes, config: { public: true }, prefixTrailingSlash: 'slash' }, serve)
}

/** The key of a `<prefix>/<bucket>/<key>` path, refused when it could name anything but a plain object. */
function objectKey(url: string, prefix: string, bucket: string): string {
  const [requestBucket = '', ...encoded] = pathOf(url)
    .slice(prefix.length + 1)
    .split('/')
  if (requestBucket !== bucket) {
    throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist')
  }
  const segments = encoded.map((segment) => {
    try {
      return decodeURIComponent(segment)
    } catch {
      throw new S3Error(400, 'InvalidURI', 'Could not parse the specified URI')
    }
  })
  const key = segments.join('/')
  const unsafe = segments.some((s) => s === '' || s === '.' || s === '..' || [...s].some(isUnsafeChar))
  if (segments.length === 0 || unsafe || Buffer.byteLength(key) > MAX_KEY_BYTES) {
    throw new S3Error(400, 'InvalidArgument', 'Object keys must be relative paths without empty, "." or ".." parts')
  }
  return key
}

/**
 * The Range header to honour. With If-Range the whole object is sent: HTTP lets a server ignore Range,
 * and the whole object is right whichever version the client holds a part of.
 */
function rangeHeader(request: FastifyRequest): string | undefined {
  return request.headers['if-range'] === undefined ? request.headers.range : undefined
}

function contentLength(request: FastifyRequest, max: number): number {
  const header = request.headers['content-length']
  if (header === undefined) {
    throw new S3Error(411, 'MissingContentLength', 'You must provide the Content-Length HTTP header')
  }
  const size = Number(header)
  if (size > max) {
    throw new S3Error(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size')
  }
  return size
}

/** The hex SHA-256 the client pinned with `x-amz-checksum-sha256` (base64), if any. */
function pinnedSha256(request: FastifyRequest): string | undefined {
  const header = request.headers['x-amz-checksum-sha256']
  if (header === undefined) {
    return undefined
  }
  const digest = typeof header === 'string' ? Buffer.from(header, 'base64') : Buffer.alloc(0)
  if (digest.length !== 32 || digest.toString('base64') !== header) {
    throw new S3Error(400, 'InvalidRequest', 'Value for x-amz-checksum-sha256 header is invalid')
  }
  return digest.toString('hex')
}

function asS3Error(error: FastifyError): S3Error {
  const status = error.statusCode ?? 500
  return status >= 400 && status < 500
    ? new S3Error(status, 'InvalidRequest', error.message)
    : new S3Error(500, 'InternalError', 'We encountered an internal error. Please try again.')
}

function pathOf(url: string): string {
  const at = url.indexOf('?')
  return at < 0 ? url : url.slice(0, at)
}

/** Control characters and backslashes have no business in a key and confuse logs and other file systems. */
function isUnsafeChar(char: string): boolean {
  return char < ' ' || char === '\u007f' || char === '\\'
}
