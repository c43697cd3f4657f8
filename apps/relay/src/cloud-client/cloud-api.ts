import { AppError, type CloudSession, isErrorBody, type UserInfo } from '@relay/contracts'
import { cloudErrorSentence } from './oauth.js'

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
  async function call<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
    let response: Response
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' }
    if (body !== undefined) {
      headers['content-type'] = 'application/json'
    }
    try {
      response = await fetch(`${cloudUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      })
    } catch (err) {
      throw new AppError('UNAVAILABLE', cloudErrorSentence(err), { cause: err })
    }
    const reply: unknown = await response.json().catch(() => undefined)
    // The cloud answers an expired or unknown token with 401.
    if (response.status === 401) {
      throw new CloudTokenRejected()
    }
    if (!response.ok) {
      if (isErrorBody(reply) && reply.code !== 'INTERNAL') {
        throw new AppError(reply.code, reply.error, { details: reply.details })
      }
      throw new AppError('UNAVAILABLE', `The cloud answered ${response.status} to ${method} ${path}`)
    }
    return reply as T
  }

  return {
    /** Any cloud API call; `path` starts with a slash. */
    request: call,
    userInfo: (token: string) => call<UserInfo>(token, 'GET', '/auth/user-info'),
    sessions: async (token: string) =>
      (await call<{ sessions: CloudSession[] }>(token, 'GET', '/auth/sessions')).sessions,
    deleteSession: (token: string, id: string) =>
      call<unknown>(token, 'DELETE', `/auth/sessions/${encodeURIComponent(id)}`),
  }
}

export type CloudApi = ReturnType<typeof createCloudApi>
