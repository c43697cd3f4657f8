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
