import { type Static, Type } from 'typebox'
import { type ErrorCode, errorCodes, errorStatus } from './errors.plain.js'

/** The one error body of every endpoint (the OAuth token endpoint alone answers in RFC 6749 form). */
export const ErrorBody = Type.Object({
  success: Type.Literal(false),
  error: Type.String(),
  code: Type.Enum(errorCodes),
  /** Validation failures name the failing fields. */
  details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
})
export type ErrorBody = Static<typeof ErrorBody>

/** Thrown by services; the servers' error handlers turn it into an `ErrorBody`. */
export class AppError extends Error {
  readonly code: ErrorCode
  readonly details: ErrorBody['details']
  /** Response headers the refusal carries, such as `Retry-After`; the servers' error handlers send them. */
  readonly headers: Readonly<Record<string, string>>

  constructor(
    code: ErrorCode,
    message: string,
    options?: ErrorOptions & { details?: ErrorBody['details']; headers?: Readonly<Record<string, string>> },
  ) {
    super(message, options)
    this.name = 'AppError'
    this.code = code
    this.details = options?.details
    this.headers = options?.headers ?? {}
  }

  get status(): number {
    return errorStatus[this.code]
  }
}

/** A 400 naming one body field, for checks a schema cannot express. */
export function invalidField(field: string, message: string): AppError {
  return new AppError('INVALID_REQUEST', `${field} ${message}`, { details: [{ path: `body/${field}`, message }] })
}
