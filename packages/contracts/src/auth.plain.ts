import { endpoint } from './endpoint.js'
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

/** The cloud's endpoints for a signed-in relay. */
export const cloudAuthUrls = {
  userInfo: endpoint('GET', '/auth/user-info'),
  listSessions: endpoint('GET', '/auth/sessions'),
  deleteSession: endpoint('DELETE', '/auth/sessions/:id'),
  /** Ends the session the calling token belongs to: its refresh token stops working at once. */
  logout: endpoint('POST', '/auth/logout'),
}
