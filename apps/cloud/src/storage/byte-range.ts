import type { ByteRange } from './disk-objects.js'
import { S3Error } from './s3-error.js'

/** A `Range: bytes=…` request before the object's size is known: `a-b`, `a-` or the last `n` bytes. */
type RangeSpec = { first: number; last: number | undefined } | { suffix: number }

/**
 * The single byte range a `Range` header asks for, as a function of the object's size; undefined for
 * the whole object. A header that is not `bytes=` syntax is ignored, as HTTP requires; several ranges
 * are refused rather than answered with the whole object, and a range that starts past the end is 416.
 */
export function requestedRange(header: string | undefined): ((size: number) => ByteRange | undefined) | undefined {
  const spec = header === undefined ? undefined : parseRange(header)
  if (!spec) {
    return undefined
  }
  return (size) => {
    if ('suffix' in spec) {
      if (spec.suffix === 0 || size === 0) {
        throw new UnsatisfiableRange(size)
      }
      return { start: Math.max(0, size - spec.suffix), end: size - 1 }
    }
    if (spec.first >= size) {
      throw new UnsatisfiableRange(size)
    }
    return { start: spec.first, end: Math.min(spec.last ?? size - 1, size - 1) }
  }
}

/** A range that starts past the end; the answer's Content-Range names the object's size. */
export class UnsatisfiableRange extends S3Error {
  readonly size: number

  constructor(size: number) {
    super(416, 'InvalidRange', 'The requested range is not satisfiable')
    this.size = size
  }
}

function parseRange(header: string): RangeSpec | undefined {
  const match = /^\s*bytes\s*=\s*(.*)$/i.exec(header)
  if (!match?.[1]) {
    return undefined
  }
  const ranges = match[1].split(',').map((part) => part.trim())
  if (ranges.length > 1) {
    if (ranges.every((part) => parseOne(part))) {
      throw new S3Error(501, 'NotImplemented', 'The embedded object store serves one byte range per request')
    }
    return undefined
  }
  return parseOne(ranges[0] ?? '')
}

function parseOne(part: string): RangeSpec | undefined {
  const match = /^(\d*)-(\d*)$/.exec(part)
  if (!match) {
    return undefined
  }
  const [, first = '', last = ''] = match
  if (first === '') {
    return last === '' ? undefined : { suffix: safeInteger(last) }
  }
  const start = safeInteger(first)
  const end = last === '' ? undefined : safeInteger(last)
  // `bytes=5-2` is not a valid range: HTTP says to ignore it and send the whole object.
  return end !== undefined && end < start ? undefined : { first: start, last: end }
}

/** Offsets beyond what a number holds exactly are past the end of any object we store. */
function safeInteger(digits: string): number {
  const value = Number(digits)
  return Number.isSafeInteger(value) ? value : Number.MAX_SAFE_INTEGER
}
