import { type Static, Type } from 'typebox'
import { ErrorBody } from './errors.js'
import { DAY, HOUR, MINUTE } from './time.js'

export const authModes = ['none', 'local', 'cloud'] as const
export type AuthMode = (typeof authModes)[number]

export const tokenTypes = ['user', 'device'] as const
export type TokenType = (typeof tokenTypes)[number]

export const authTimings = {
  accessTokenLifetime: 15 * MINUTE,
  refreshTokenLifetime: 30 * DAY,
  /** The relay refreshes an access token this long before it expires. */
  refreshMargin: 5 * MINUTE,
  /** Proxied cloud user-info, sessions and token validation, per user id. */
  userInfoCache: 2 * MINUTE,
  licenseCache: 4 * HOUR,
  frontendSession: 7 * DAY,
} as const

export const cloudNotAuthenticatedMessage = 'Backend is not authenticated with the cloud'
export const deviceTokenForbiddenMessage = 'Device tokens are not permitted for this endpoint'
export const licenseRequiredMessage = 'Cloud backups require a valid Pro license'

/** The OAuth client id of every relay: a public, first-party client using PKCE and a loopback redirect. */
export const relayClientId = 'relay'
/** The scope a relay asks for: a refresh token comes with it. */
export const relayScope = 'openid offline_access backups'

export const licenseSources = ['gifted', 'subscription'] as const
export type LicenseSource = (typeof licenseSources)[number]

export const UserInfo = Type.Object({
  userId: Type.String(),
  email: Type.String(),
  name: Type.String(),
  hasValidLicense: Type.Boolean(),
  licenseSource: Type.Union([Type.Enum(licenseSources), Type.Null()]),
})
export type UserInfo = Static<typeof UserInfo>

/** One signed-in relay (an OAuth grant) of the user. */
export const CloudSession = Type.Object({
  id: Type.String(),
  clientId: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  /** True for the session the calling token belongs to. */
  current: Type.Boolean(),
})
export type CloudSession = Static<typeof CloudSession>

export const CloudSessionList = Type.Object({ success: Type.Literal(true), sessions: Type.Array(CloudSession) })
export type CloudSessionList = Static<typeof CloudSessionList>

const Success = Type.Object({ success: Type.Literal(true) })
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }

export const userInfoRoute = {
  method: 'GET',
  url: '/auth/user-info',
  schema: { response: { 200: UserInfo, ...errors } },
} as const

export const listSessionsRoute = {
  method: 'GET',
  url: '/auth/sessions',
  schema: { response: { 200: CloudSessionList, ...errors } },
} as const

export const deleteSessionRoute = {
  method: 'DELETE',
  url: '/auth/sessions/:id',
  schema: {
    // A session id is the SHA-256 hex digest `/auth/sessions` lists, nothing a query could choke on.
    params: Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{64}$' }) }),
    response: { 200: Success, ...errors },
  },
} as const

/** Ends the session the calling token belongs to: its refresh token stops working at once. */
export const logoutRoute = {
  method: 'POST',
  url: '/auth/logout',
  schema: { response: { 200: Success, ...errors } },
} as const
