import { type Static, Type } from 'typebox'
import { CloudSession, UserInfo } from './auth.js'
import { authModes } from './auth.plain.js'
import { routesOf } from './endpoint.js'
import { ErrorBody } from './errors.js'
import { localAuthLimits, returnToRule, unifiedAuthUrls } from './unified-auth.plain.js'

/** Who is signed in to the relay's UI. */
export const SessionUser = Type.Object({
  kind: Type.Union([Type.Literal('local'), Type.Literal('cloud')]),
  id: Type.String(),
  /** The local username, or the cloud account's name or email. */
  name: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
})
export type SessionUser = Static<typeof SessionUser>

/** The cloud account the relay acts for, when it holds a cloud session. */
export const CloudConnection = Type.Object({
  userId: Type.String(),
  backendId: Type.String(),
  /** When the access token in hand expires; null until one has been obtained since the relay started. */
  accessTokenExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  email: Type.Union([Type.String(), Type.Null()]),
  name: Type.Union([Type.String(), Type.Null()]),
  connectedAt: Type.String({ format: 'date-time' }),
  /** The cloud's page where the account's owner manages it: profile, sessions, Pro, backups. */
  accountUrl: Type.String(),
})
export type CloudConnection = Static<typeof CloudConnection>

export const AuthStatus = Type.Object({
  mode: Type.Enum(authModes),
  /** A fresh relay that has not been through the setup screen yet. */
  setupRequired: Type.Boolean(),
  /** Whether any local account exists (local mode needs one). */
  hasLocalUsers: Type.Boolean(),
  /** The caller may use the API: mode none, a valid frontend session, or a valid cloud bearer token. */
  isAuthenticated: Type.Boolean(),
  /** The relay holds cloud credentials and a fresh user-info call with them just succeeded. */
  backendAuthenticated: Type.Boolean(),
  user: Type.Union([SessionUser, Type.Null()]),
  cloud: Type.Union([CloudConnection, Type.Null()]),
  /** The cloud account's Pro license, from the same fresh user-info call; null when it could not be read. */
  hasValidLicense: Type.Union([Type.Boolean(), Type.Null()]),
  /** Why the cloud check failed, when the relay holds credentials but backendAuthenticated is false. */
  cloudError: Type.Union([Type.String(), Type.Null()]),
})
export type AuthStatus = Static<typeof AuthStatus>

const Username = Type.String({
  minLength: localAuthLimits.usernameMinLength,
  maxLength: localAuthLimits.usernameMaxLength,
  pattern: '^\\S(.*\\S)?$',
})
const Password = Type.String({
  minLength: localAuthLimits.passwordMinLength,
  maxLength: localAuthLimits.passwordMaxLength,
})

export const LocalSetupBody = Type.Object({ username: Username, password: Password }, { additionalProperties: false })
export type LocalSetupBody = Static<typeof LocalSetupBody>

/** Sign-in takes any password length up to the maximum, so a short wrong one still counts as a failure. */
export const LocalLoginBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: localAuthLimits.usernameMaxLength }),
    password: Type.String({ minLength: 1, maxLength: localAuthLimits.passwordMaxLength }),
  },
  { additionalProperties: false },
)
export type LocalLoginBody = Static<typeof LocalLoginBody>

export const SignedInReply = Type.Object({ success: Type.Literal(true), user: SessionUser })
export type SignedInReply = Static<typeof SignedInReply>

export const ModeBody = Type.Object({ mode: Type.Enum(authModes) }, { additionalProperties: false })
export type ModeBody = Static<typeof ModeBody>
export const ModeReply = Type.Object({ success: Type.Literal(true), mode: Type.Enum(authModes) })

export const ForceRefreshReply = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  accessTokenExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
})
export type ForceRefreshReply = Static<typeof ForceRefreshReply>

/**
 * Where the browser goes after a cloud sign-in: a path of the relay's UI, never another site. No
 * form a browser could read as another host passes: `//x`, `/\\x`, dot segments (`/.//x`),
 * encoded slashes, backslashes and dots, control characters.
 */
export const ReturnTo = Type.String(returnToRule)

export const CloudLoginQuery = Type.Object(
  {
    returnTo: Type.Optional(ReturnTo),
    /** Switch the relay to cloud mode once the sign-in succeeds (the setup screen's choice). */
    mode: Type.Optional(Type.Literal('cloud')),
  },
  { additionalProperties: false },
)
export type CloudLoginQuery = Static<typeof CloudLoginQuery>

export const CloudCallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 2048 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  iss: Type.Optional(Type.String({ maxLength: 2048 })),
  error: Type.Optional(Type.String({ maxLength: 256 })),
  error_description: Type.Optional(Type.String({ maxLength: 2048 })),
})
export type CloudCallbackQuery = Static<typeof CloudCallbackQuery>

export const CloudSessionsReply = Type.Object({ success: Type.Literal(true), sessions: Type.Array(CloudSession) })

const Success = Type.Object({ success: Type.Literal(true) })
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody }

const unifiedAuthSchemas = {
  status: { response: { 200: AuthStatus } },
  setMode: { body: ModeBody, response: { 200: ModeReply, ...errors } },
  localSetup: { body: LocalSetupBody, response: { 201: SignedInReply, ...errors } },
  localLogin: { body: LocalLoginBody, response: { 200: SignedInReply, ...errors } },
  logout: { response: { 200: Success, ...errors } },
  cloudLogin: { querystring: CloudLoginQuery, response: { ...errors } },
  cloudCallback: { querystring: CloudCallbackQuery, response: { ...errors } },
  cloudLogout: { response: { 200: Success, ...errors } },
  cloudUserInfo: { response: { 200: Type.Object({ success: Type.Literal(true), userInfo: UserInfo }), ...errors } },
  cloudSessions: { response: { 200: CloudSessionsReply, ...errors } },
  deleteCloudSession: {
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }),
    response: { 200: Success, ...errors },
  },
  forceRefresh: { response: { 200: ForceRefreshReply, ...errors } },
} as const
export type UnifiedAuthSchemas = typeof unifiedAuthSchemas

export const unifiedAuthRoutes = routesOf(unifiedAuthUrls, unifiedAuthSchemas)
