import { AppError, type CloudSession, isErrorBody, type UserInfo } from '@relay/contracts'
import { describeCloudError } from './oauth.js'

const requestTimeoutMs = 10_000

/** The cloud refused the relay's access token: a refresh (or a new sign-in) is needed. */
export class CloudTokenRejected extends AppError {
  constructor(message = 'The cloud did not accept the relay credentials; sign in to the cloud again') {
    super('CLOUD_NOT_AUTHENTICATED', message)
  }
}

/**
 * Calls of the cloud API with a user's bearer token. The cloud's error bodies come back as the same
 * `AppError` (its codes are ours), except that a refused token is a `CloudTokenRejected`: the
 * browser's own session is fine, the relay's cloud credentials are not.
 */
export function createCloudApi({ cloudUrl, timeoutMs = requestTimeoutMs }: { cloudUrl: string; timeoutMs?: number }) {
  async function call<T>(token: string, method: string, path: string): Promise<T> {
    let response: Response
    try {
      response = await fetch(`${cloudUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      })
    } catch (err) {
      throw new AppError('UNAVAILABLE', `The cloud is unreachable: ${describeCloudError(err)}`, { cause: err })
    }
    const body: unknown = await response.json().catch(() => undefined)
    // The cloud answers an expired or unknown token with 401, and some token errors with 400.
    if (response.status === 401 || (response.status === 400 && isErrorBody(body) && body.code === 'UNAUTHORIZED')) {
      throw new CloudTokenRejected()
    }
    if (!response.ok) {
      if (isErrorBody(body) && body.code !== 'INTERNAL') {
        throw new AppError(body.code, body.error, { details: body.details })
      }
      throw new AppError('UNAVAILABLE', `The cloud answered ${response.status} to ${method} ${path}`)
    }
    return body as T
  }

  return {
    userInfo: (token: string) => call<UserInfo>(token, 'GET', '/auth/user-info'),
    sessions: async (token: string) =>
      (await call<{ sessions: CloudSession[] }>(token, 'GET', '/auth/sessions')).sessions,
    deleteSession: (token: string, id: string) =>
      call<unknown>(token, 'DELETE', `/auth/sessions/${encodeURIComponent(id)}`),
    /** Ends the grant the token belongs to, and with it every refresh token of that sign-in. */
    logout: (token: string) => call<unknown>(token, 'POST', '/auth/logout'),
  }
}

export type CloudApi = ReturnType<typeof createCloudApi>
