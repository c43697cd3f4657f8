import { createHash, createHmac, type Hash, type Hmac, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { MINUTE, SECOND } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import { SignatureV4 } from '@smithy/signature-v4'
import { S3Error } from './s3-error.js'

export type S3Credentials = { accessKeyId: string; secretAccessKey: string }

export type SignedRequest = { method: string; url: string; headers: IncomingHttpHeaders }

/** What a verified request promises about its body: a hex SHA-256 when the signature covers one. */
export type VerifiedRequest = { payloadSha256: string | undefined }

type SignableRequest = Parameters<SignatureV4['presign']>[0]
type Query = SignableRequest['query'] & {}

const ALGORITHM = 'AWS4-HMAC-SHA256'
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD'
const PAYLOAD_HEADER = 'x-amz-content-sha256'
const MAX_EXPIRES_SECONDS = 7 * 24 * 60 * 60
/** S3's tolerance for a request signed by a clock that runs ahead or behind. */
const MAX_SKEW = 15 * MINUTE

/**
 * Checks AWS Signature V4, in a presigned URL or an Authorization header, by signing the request again
 * with the same secret, region, date and signed headers and comparing in constant time. Expiry and
 * clock skew are checked apart from the signature, against `clock`.
 */
export function createSigV4Verifier({
  credentials,
  region,
  clock,
}: {
  credentials: S3Credentials
  region: string
  clock: Clock
}) {
  // S3 signs the path as sent, without the second URI encoding other AWS services use.
  const signer = new SignatureV4({
    credentials,
    region,
    service: 's3',
    sha256: Sha256,
    uriEscapePath: false,
    applyChecksum: false,
  })

  async function verifyQuery(base: SignableRequest, query: Query): Promise<VerifiedRequest> {
    const algorithm = single(query['X-Amz-Algorithm'])
    const credential = single(query['X-Amz-Credential'])
    const date = parseAmzDate(single(query['X-Amz-Date']))
    const expires = Number(single(query['X-Amz-Expires']))
    const signedHeaders = single(query['X-Amz-SignedHeaders'])?.split(';') ?? []
    const signature = single(query['X-Amz-Signature'])
    if (algorithm !== ALGORITHM || !credential || !date || !signature || !Number.isInteger(expires) || expires < 1) {
      throw new S3Error(400, 'AuthorizationQueryParametersError', 'Malformed or missing query authentication')
    }
    if (expires > MAX_EXPIRES_SECONDS) {
      throw new S3Error(400, 'AuthorizationQueryParametersError', 'X-Amz-Expires must be at most 604800 seconds')
    }
    checkAccessKey(credential)
    const headers = signedHeaderValues(base, signedHeaders)
    // A presigned URL states its payload hash in the query, or signs none at all.
    const payloadHash = single(query['X-Amz-Content-Sha256']) ?? UNSIGNED_PAYLOAD
    const payloadHeaderSigned = signedHeaders.includes(PAYLOAD_HEADER)
    const expected = await signer.presign(
      { ...base, query, headers: payloadHeaderSigned ? headers : { ...headers, [PAYLOAD_HEADER]: payloadHash } },
      {
        signingDate: date,
        expiresIn: expires,
        signableHeaders: new Set(signedHeaders),
        // The payload hash goes into the canonical request without becoming a signed header or a new parameter.
        unsignableHeaders: new Set(payloadHeaderSigned ? [] : [PAYLOAD_HEADER]),
        unhoistableHeaders: new Set([...signedHeaders, PAYLOAD_HEADER]),
      },
    )
    checkSignature(single(expected.query?.['X-Amz-Signature']), signature)
    const now = clock.now().getTime()
    if (now > date.getTime() + expires * SECOND) {
      throw new S3Error(403, 'AccessDenied', 'Request has expired')
    }
    if (date.getTime() > now + MAX_SKEW) {
      throw new S3Error(403, 'AccessDenied', 'Request is not valid yet')
    }
    return { payloadSha256: undefined }
  }

  async function verifyHeader(base: SignableRequest, authorization: string): Promise<VerifiedRequest> {
    const fields = parseAuthorization(authorization)
    const date = parseAmzDate(base.headers['x-amz-date'])
    const payloadHash = base.headers[PAYLOAD_HEADER]
    if (!fields || !date) {
      throw new S3Error(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed')
    }
    // Unsigned, a payload hash or date could be swapped by whoever replays the header.
    for (const required of ['x-amz-date', PAYLOAD_HEADER]) {
      if (!fields.signedHeaders.includes(required)) {
        throw new S3Error(403, 'AccessDenied', `${required} must be a signed header`)
      }
    }
    if (payloadHash !== UNSIGNED_PAYLOAD && !/^[0-9a-f]{64}$/.test(payloadHash ?? '')) {
      throw new S3Error(400, 'InvalidArgument', `Unsupported ${PAYLOAD_HEADER}: ${payloadHash}`)
    }
    checkAccessKey(fields.credential)
    const expected = await signer.sign(
      { ...base, headers: signedHeaderValues(base, fields.signedHeaders) },
      { signingDate: date, signableHeaders: new Set(fields.signedHeaders) },
    )
    checkSignature(parseAuthorization(expected.headers.authorization ?? '')?.signature, fields.signature)
    if (Math.abs(clock.now().getTime() - date.getTime()) > MAX_SKEW) {
      throw new S3Error(
        403,
        'RequestTimeTooSkewed',
        'The difference between the request time and the server time is too large',
      )
    }
    return { payloadSha256: payloadHash === UNSIGNED_PAYLOAD ? undefined : payloadHash }
  }

  function checkAccessKey(credential: string) {
    const [accessKeyId] = credential.split('/')
    if (accessKeyId !== credentials.accessKeyId) {
      throw new S3Error(403, 'InvalidAccessKeyId', 'The access key ID you provided does not exist in our records')
    }
  }

  return {
    /** Resolves when the request is signed with our credentials and still valid; throws an S3Error otherwise. */
    async verify(request: SignedRequest): Promise<VerifiedRequest> {
      const queryAt = request.url.indexOf('?')
      const path = queryAt < 0 ? request.url : request.url.slice(0, queryAt)
      const query = parseQuery(queryAt < 0 ? '' : request.url.slice(queryAt + 1))
      const base: SignableRequest = {
        method: request.method,
        protocol: 'http:',
        hostname: '',
        path,
        query,
        headers: flattenHeaders(request.headers),
      }
      const { authorization } = base.headers
      const presigned = query['X-Amz-Signature'] !== undefined
      if (presigned && authorization) {
        throw new S3Error(400, 'InvalidArgument', 'Only one auth mechanism allowed')
      }
      if (presigned) {
        return verifyQuery(base, query)
      }
      if (authorization) {
        return verifyHeader(base, authorization)
      }
      throw new S3Error(403, 'AccessDenied', 'Anonymous access is forbidden')
    },
  }
}

export type SigV4Verifier = ReturnType<typeof createSigV4Verifier>

function signedHeaderValues(request: SignableRequest, signedHeaders: readonly string[]): Record<string, string> {
  if (!signedHeaders.includes('host')) {
    throw new S3Error(403, 'AccessDenied', 'The host header must be signed')
  }
  const values: Record<string, string> = {}
  for (const name of signedHeaders) {
    const value = request.headers[name]
    if (value === undefined) {
      throw new S3Error(403, 'SignatureDoesNotMatch', `Signed header ${name} is missing from the request`)
    }
    values[name] = value
  }
  return values
}

function checkSignature(expected: string | undefined, given: string) {
  const a = Buffer.from(expected ?? '')
  const b = Buffer.from(given)
  if (a.length === 0 || a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new S3Error(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided',
    )
  }
}

/** Query parameters as sent: percent-decoded, `+` kept literal (S3 clients encode a space as %20). */
function parseQuery(raw: string): Query {
  const query: Record<string, string | string[]> = {}
  for (const part of raw.split('&')) {
    if (part === '') {
      continue
    }
    const at = part.indexOf('=')
    const name = decode(at < 0 ? part : part.slice(0, at))
    const value = at < 0 ? '' : decode(part.slice(at + 1))
    const previous = query[name]
    query[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value]
  }
  return query
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    throw new S3Error(400, 'InvalidArgument', 'Malformed query string')
  }
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) {
      flat[name] = Array.isArray(value) ? value.join(',') : value
    }
  }
  return flat
}

function parseAuthorization(header: string) {
  if (!header.startsWith(`${ALGORITHM} `)) {
    return undefined
  }
  const fields = new Map<string, string>()
  for (const part of header.slice(ALGORITHM.length + 1).split(',')) {
    const at = part.indexOf('=')
    fields.set(part.slice(0, at).trim(), part.slice(at + 1).trim())
  }
  const credential = fields.get('Credential')
  const signedHeaders = fields.get('SignedHeaders')
  const signature = fields.get('Signature')
  if (!credential || !signedHeaders || !signature) {
    return undefined
  }
  return { credential, signedHeaders: signedHeaders.split(';'), signature }
}

/** `20260115T120000Z` → a Date; anything else → undefined. */
function parseAmzDate(value: string | undefined): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value ?? '')
  if (!match) {
    return undefined
  }
  const [, year, month, day, hour, minute, second] = match
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}Z`)
  return Number.isNaN(date.getTime()) ? undefined : date
}

function single(value: string | string[] | null | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined
}

type SourceData = string | ArrayBuffer | ArrayBufferView

/** The hash SignatureV4 wants, on node:crypto: SHA-256, or HMAC-SHA256 when given a secret. */
class Sha256 {
  readonly #hash: Hash | Hmac

  constructor(secret?: SourceData) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret))
  }

  update(data: Uint8Array): void {
    this.#hash.update(data)
  }

  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest())
  }
}

function bytes(data: SourceData): Uint8Array {
  if (typeof data === 'string') {
    return Buffer.from(data, 'utf8')
  }
  return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data)
}
