import type { IncomingHttpHeaders } from 'node:http'
import { S3Error } from './s3-error.js'

/** SigV4's presigned-URL parameters, compared in lower case. */
const AUTH_PARAMETERS = new Set([
  'x-amz-algorithm',
  'x-amz-credential',
  'x-amz-date',
  'x-amz-expires',
  'x-amz-signedheaders',
  'x-amz-signature',
  'x-amz-content-sha256',
  'x-amz-security-token',
])

/** The operations served; the AWS SDK names the one it calls in `?x-id=`. */
const SERVED_OPERATIONS = new Set(['GetObject', 'PutObject', 'HeadObject', 'DeleteObject'])

/**
 * Headers (or the same names hoisted into a presigned URL's query) asking for something this store
 * does not do. Ignoring them would be a silent lie: a copy would write an empty object, metadata,
 * tags, encryption or a CRC checksum would be dropped and reported stored.
 */
const UNSUPPORTED_HEADERS =
  /^x-amz-(copy-source.*|tagging.*|acl|grant-.*|server-side-encryption.*|object-lock-.*|website-redirect-location|meta-.*|checksum-(crc32|crc32c|crc64nvme|sha1|type)|write-offset-bytes)$/

/** Conditional writes and deletes: without them honoured, a request meant to be refused would succeed. */
const CONDITIONAL_HEADERS = ['if-match', 'if-none-match']

/**
 * Refuses, with S3's `NotImplemented` (501), every request for an operation beyond single-object
 * GET, HEAD, PUT and DELETE: sub-resources (`?uploads`, `?acl`, `?tagging`…), bucket and service
 * requests (listing, batch delete, create/delete/head bucket), copies and the other headers above.
 * Plain POSTs on an object are left to the method check (405), as S3 answers them.
 * `path` is the part after the endpoint's prefix, e.g. `/relay-backups/user-1/b.zip`.
 */
export function refuseUnsupported(method: string, path: string, rawQuery: string, headers: IncomingHttpHeaders) {
  for (const [name, value] of queryParameters(rawQuery)) {
    const lower = name.toLowerCase()
    if (AUTH_PARAMETERS.has(lower)) {
      continue
    }
    if (lower === 'x-id') {
      if (!SERVED_OPERATIONS.has(value)) {
        throw notImplemented(value)
      }
      continue
    }
    if (lower === 'response-content-disposition' || (lower.startsWith('x-amz-') && !UNSUPPORTED_HEADERS.test(lower))) {
      continue
    }
    throw notImplemented(value === '' ? `?${name}` : `?${name}=`)
  }
  const [bucket = '', ...key] = path.replace(/^\//, '').split('/')
  if (bucket === '' || key.join('/') === '') {
    throw notImplemented(bucket === '' ? 'requests on the service (ListBuckets)' : 'requests on the bucket')
  }
  for (const name of Object.keys(headers)) {
    if (UNSUPPORTED_HEADERS.test(name)) {
      throw notImplemented(`the ${name} header`)
    }
  }
  if ((method === 'PUT' || method === 'DELETE') && CONDITIONAL_HEADERS.some((name) => headers[name] !== undefined)) {
    throw notImplemented('conditional writes (If-Match, If-None-Match)')
  }
}

function notImplemented(what: string): S3Error {
  return new S3Error(
    501,
    'NotImplemented',
    `The embedded object store does not implement ${what}; it serves single-object GET, HEAD, PUT and DELETE. ` +
      'Use an S3-compatible store (S3_ENDPOINT) for more.',
  )
}

/** Names and values of a raw query string; a malformed escape keeps its raw text (the signature check refuses it). */
function queryParameters(raw: string): [string, string][] {
  return raw
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const at = part.indexOf('=')
      return [decode(at < 0 ? part : part.slice(0, at)), decode(at < 0 ? '' : part.slice(at + 1))]
    })
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
