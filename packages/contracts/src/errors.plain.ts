/**
 * The closed set of machine-readable error codes. Each code maps to one HTTP status
 * (see `errorStatus`), so clients can switch on `code` and never parse messages.
 */
export const errorCodes = [
  /** Body, query or params failed validation, or the JSON was malformed. */
  'INVALID_REQUEST',
  /** The request's content type is one the endpoint does not accept. */
  'UNSUPPORTED_MEDIA_TYPE',
  /** The body exceeds the endpoint's size limit. */
  'PAYLOAD_TOO_LARGE',
  /** No bearer token or session, or it is invalid or expired. */
  'UNAUTHORIZED',
  /** Authenticated, but not allowed to do this. */
  'FORBIDDEN',
  /** Cloud backups need a valid Pro license. */
  'LICENSE_REQUIRED',
  /** Device tokens cannot call user endpoints. */
  'DEVICE_TOKEN_FORBIDDEN',
  /** The backend id belongs to another user. */
  'BACKEND_OWNED_BY_OTHER',
  /** The relay holds no cloud session. */
  'CLOUD_NOT_AUTHENTICATED',
  /** Unknown route, or an id that does not exist or belongs to someone else. */
  'NOT_FOUND',
  /** The resource is not in a state that allows the operation. */
  'CONFLICT',
  /** The uploaded object does not match what was announced. */
  'UPLOAD_MISMATCH',
  'QUOTA_BACKUP_SIZE',
  'QUOTA_STORAGE',
  'QUOTA_COUNT',
  'RATE_LIMITED',
  /** A dependency (database, cloud, object store) is unreachable. */
  'UNAVAILABLE',
  /** Anything unexpected; its details stay in the server log. */
  'INTERNAL',
] as const

export type ErrorCode = (typeof errorCodes)[number]

export const errorStatus = {
  INVALID_REQUEST: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PAYLOAD_TOO_LARGE: 413,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  LICENSE_REQUIRED: 403,
  DEVICE_TOKEN_FORBIDDEN: 403,
  BACKEND_OWNED_BY_OTHER: 403,
  CLOUD_NOT_AUTHENTICATED: 401,
  NOT_FOUND: 404,
  CONFLICT: 409,
  UPLOAD_MISMATCH: 409,
  QUOTA_BACKUP_SIZE: 429,
  QUOTA_STORAGE: 429,
  QUOTA_COUNT: 429,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
} as const satisfies Record<ErrorCode, number>
