import { type Static, Type } from 'typebox'
import { cloudAuthUrls, licenseSources } from './auth.plain.js'
import { routesOf } from './endpoint.js'
import { ErrorBody } from './errors.js'

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

const cloudAuthSchemas = {
  userInfo: { response: { 200: UserInfo, ...errors } },
  listSessions: { response: { 200: CloudSessionList, ...errors } },
  deleteSession: {
    // A session id is the SHA-256 hex digest `/auth/sessions` lists, nothing a query could choke on.
    params: Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{64}$' }) }),
    response: { 200: Success, ...errors },
  },
  logout: { response: { 200: Success, ...errors } },
} as const
export type CloudAuthSchemas = typeof cloudAuthSchemas
export const cloudAuthRoutes = routesOf(cloudAuthUrls, cloudAuthSchemas)

export const userInfoRoute = cloudAuthRoutes.userInfo
export const listSessionsRoute = cloudAuthRoutes.listSessions
export const deleteSessionRoute = cloudAuthRoutes.deleteSession
/** Ends the session the calling token belongs to: its refresh token stops working at once. */
export const logoutRoute = cloudAuthRoutes.logout
