import type { AuthMode } from './auth.plain.js'
import { endpoint } from './endpoint.js'
import { MINUTE } from './time.js'

/** The relay's own sign-in: local accounts and the cookie that carries a frontend session. */
export const localAuthLimits = {
  usernameMinLength: 1,
  usernameMaxLength: 64,
  passwordMinLength: 8,
  passwordMaxLength: 256,
  /** Failed sign-ins a username, and a client address, may make in a row; one attempt is regained per window / failures. */
  failuresPerUser: 5,
  failuresPerAddress: 20,
  failureWindow: 15 * MINUTE,
} as const

/** The cookie holding the frontend session token (HttpOnly, SameSite=Lax); the relay keeps only its hash. */
export const sessionCookieName = 'relay_session'

const pattern = '^(?!.*//)(?!.*\\\\)(?!.*%(?:2[fF]|5[cC]|2[eE]))(?!.*/\\.{1,2}(?:[/?#]|$))/[^\\u0000-\\u0020\\u007f]*$'
const maxLength = 512
/** The paths `ReturnTo` accepts (see there); `sameOriginPath` applies the same rule where no schema runs. */
export const returnToRule = { pattern, maxLength } as const
const returnToRegExp = new RegExp(pattern)

/** `value` when it is a path `ReturnTo` accepts, so a browser stays on this origin; null otherwise. */
export function sameOriginPath(value: string): string | null {
  return value.length <= maxLength && returnToRegExp.test(value) ? value : null
}

/**
 * What the callback tells the UI in the `cloud` query parameter of the page it returns to:
 * `connected`, or why not: the user declined at the cloud, the exchange failed, the cloud could not
 * be reached, or the relay is connected to another cloud account (disconnect it first).
 * No token or code ever rides in a URL the UI sees.
 */
export const cloudLoginOutcomes = ['connected', 'denied', 'failed', 'unreachable', 'other-account'] as const
export type CloudLoginOutcome = (typeof cloudLoginOutcomes)[number]

export const authModeLabels = {
  none: 'No sign-in',
  local: 'Local accounts',
  cloud: 'Cloud account',
} as const satisfies Record<AuthMode, string>

const prefix = '/api/unified-auth'

export const unifiedAuthUrls = {
  status: endpoint('GET', `${prefix}/status`),
  setMode: endpoint('POST', `${prefix}/mode`),
  localSetup: endpoint('POST', `${prefix}/local/setup`),
  localLogin: endpoint('POST', `${prefix}/local/login`),
  logout: endpoint('POST', `${prefix}/logout`),
  cloudLogin: endpoint('GET', `${prefix}/cloud/login`),
  cloudCallback: endpoint('GET', `${prefix}/cloud/callback`),
  /** Revokes the relay's cloud session at the cloud and forgets its credentials, even when the cloud is unreachable. */
  cloudLogout: endpoint('POST', `${prefix}/cloud/logout`),
  cloudUserInfo: endpoint('GET', `${prefix}/cloud/user-info`),
  cloudSessions: endpoint('GET', `${prefix}/cloud/sessions`),
  deleteCloudSession: endpoint('DELETE', `${prefix}/cloud/sessions/:id`),
  forceRefresh: endpoint('POST', `${prefix}/tokens/force-refresh`),
}
