import { type ErrorCode, getRelayHealth, isErrorBody, type RelayHealth } from '@relay/contracts'

/** A failed API call. `status` is 0 when no response arrived at all. */
export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: number

  constructor(code: ErrorCode, message: string, status: number, options?: ErrorOptions) {
    super(message, options)
    this.name = 'ApiError'
    this.code = code
    this.status = status
  }
}

export type GetJsonOptions = {
  signal?: AbortSignal
  /** Non-2xx statuses whose body is data by contract (health answers 503 with a full report). */
  dataStatuses?: readonly number[]
}

export async function getJson<T>(path: string, { signal, dataStatuses = [] }: GetJsonOptions = {}): Promise<T> {
  let response: Response
  try {
    response = await fetch(path, { credentials: 'same-origin', headers: { accept: 'application/json' }, signal })
  } catch (error) {
    if (signal?.aborted) {
      throw error
    }
    throw new ApiError('UNAVAILABLE', `Network error: ${messageOf(error)}`, 0, { cause: error })
  }

  const body = await readJson(response)
  if (isErrorBody(body)) {
    throw new ApiError(body.code, body.error, response.status)
  }
  if (response.ok || dataStatuses.includes(response.status)) {
    if (body === undefined) {
      throw new ApiError('INTERNAL', `Expected JSON from ${path} (HTTP ${response.status})`, response.status)
    }
    return body as T
  }
  // Not our error body: something between the browser and the relay (a proxy, a stopped dev server) answered.
  const code = response.status >= 500 ? 'UNAVAILABLE' : 'INTERNAL'
  throw new ApiError(code, `HTTP ${response.status} ${response.statusText}`.trim(), response.status)
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return await response.json()
  } catch {
    return undefined
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Statuses a route's contract declares a body for, beyond 2xx. */
function dataStatusesOf(route: { schema: { response: object } }): number[] {
  return Object.keys(route.schema.response).map(Number)
}

export const api = {
  health: (signal?: AbortSignal) =>
    getJson<RelayHealth>(getRelayHealth.url, { signal, dataStatuses: dataStatusesOf(getRelayHealth) }),
}
