import {
  type AckBody,
  type AcknowledgeBody,
  type AuthMode,
  type BackupSettingsChange,
  backupEncryptionEndpoints,
  type CallInput,
  type CloudLoginQuery,
  type CreateCollectorBody,
  type CreateJunctionBody,
  type CreateStreamBody,
  dashboardEndpoints,
  type Endpoint,
  type ErrorBody,
  type ErrorCode,
  type FeatureFlagsUpdate,
  featureFlagEndpoints,
  type HealthEventsQuery,
  type HealthHistoryQuery,
  type HistoryQuery,
  healthAlertEndpoints,
  healthEndpoints,
  healthHistoryEndpoints,
  isErrorBody,
  type LocalLoginBody,
  type LocalSetupBody,
  notificationEndpoints,
  type Query,
  type Reply,
  type RestoreBody,
  relayBackupEndpoints,
  type SilenceBody,
  sourceEndpoints,
  type UpdateCollectorBody,
  type UpdateJunctionBody,
  type UpdateStreamBody,
  unifiedAuthEndpoints,
} from '@relay/contracts'

/** A failed API call. `status` is 0 when no response arrived at all. */
export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: number
  /** The failing fields of a validation error (400 `INVALID_REQUEST`). */
  readonly details: NonNullable<ErrorBody['details']>

  constructor(
    code: ErrorCode,
    message: string,
    status: number,
    options?: ErrorOptions & { details?: ErrorBody['details'] },
  ) {
    super(message, options)
    this.name = 'ApiError'
    this.code = code
    this.status = status
    this.details = options?.details ?? []
  }
}

/** What a call sends, each part typed by the endpoint's schemas, and what aborts it. */
export type CallOptions<E extends Endpoint> = CallInput<E> & { signal?: AbortSignal }

/** The options may be left out when the endpoint takes no url parameters and no body. */
type CallArgs<E extends Endpoint> =
  Partial<CallOptions<E>> extends CallOptions<E> ? [options?: CallOptions<E>] : [options: CallOptions<E>]

type UntypedOptions = {
  params?: Readonly<Record<string, string | number>>
  query?: Readonly<Record<string, string | number | boolean | undefined>>
  body?: unknown
  signal?: AbortSignal
}

/**
 * Calls an endpoint of the relay at `origin` (the UI's own when empty). Resolves to the reply its
 * contract declares for 2xx, or for a status whose body is data (health's 503); anything else is
 * thrown as an `ApiError`.
 */
export function createCall(origin = '') {
  return function call<E extends Endpoint>(endpoint: E, ...[options]: CallArgs<E>): Promise<Reply<E>> {
    const { params, query, body, signal } = (options ?? {}) as UntypedOptions
    const url = origin + filledUrl(endpoint.url, params, query)
    // A request without a body (`POST …/start`) sends no content type: the relay rejects an empty body that claims to be JSON.
    const init: RequestInit =
      body === undefined
        ? { method: endpoint.method, signal }
        : {
            method: endpoint.method,
            signal,
            body: JSON.stringify(body),
            headers: { 'content-type': 'application/json' },
          }
    return request(url, init, endpoint.dataStatuses) as Promise<Reply<E>>
  }
}

export const call = createCall()

type UrlInput<E extends Endpoint> = Omit<CallInput<E>, 'body'>

/** The endpoint's url with its parameters filled in and its query appended. */
export function urlOf<E extends Endpoint>(endpoint: E, input: UrlInput<E>): string {
  const { params, query } = input as UntypedOptions
  return filledUrl(endpoint.url, params, query)
}

/** `url` with each `:name` replaced by its encoded parameter, and the defined query values appended. */
function filledUrl(url: string, params: UntypedOptions['params'] = {}, query: UntypedOptions['query'] = {}): string {
  const path = url.replace(/:(\w+)/g, (_match, name: string) => {
    const value = params[name]
    if (value === undefined) {
      throw new Error(`${url} needs the parameter ${name}`)
    }
    return encodeURIComponent(String(value))
  })
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) {
      search.set(key, String(value))
    }
  }
  const text = search.toString()
  return text ? `${path}?${text}` : path
}

async function request(url: string, init: RequestInit, dataStatuses: readonly number[]): Promise<unknown> {
  let response: Response
  try {
    response = await fetch(url, {
      ...init,
      credentials: 'same-origin',
      headers: { accept: 'application/json', ...init.headers },
    })
  } catch (error) {
    if (init.signal?.aborted) {
      throw error
    }
    throw new ApiError('UNAVAILABLE', `Network error: ${messageOf(error)}`, 0, { cause: error })
  }

  const body = await readJson(response)
  if (isErrorBody(body)) {
    throw new ApiError(body.code, body.error, response.status, { details: body.details })
  }
  if (response.ok || dataStatuses.includes(response.status)) {
    if (body === undefined) {
      throw new ApiError('INTERNAL', `Expected JSON from ${url} (HTTP ${response.status})`, response.status)
    }
    return body
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

const sources = sourceEndpoints
const auth = unifiedAuthEndpoints
const backups = relayBackupEndpoints
const notifications = notificationEndpoints

/** The relay's API as the pages use it; every reply type comes from the contract. */
export const api = {
  health: (signal?: AbortSignal) => call(healthEndpoints.relay, { signal }),

  featureFlags: (signal?: AbortSignal) => call(featureFlagEndpoints.get, { signal }),
  updateFeatureFlags: (update: FeatureFlagsUpdate) => call(featureFlagEndpoints.update, { body: update }),

  pendingNotifications: (since: number | undefined, signal?: AbortSignal) =>
    call(notifications.pending, { query: { since }, signal }),
  acknowledgeNotifications: (ids: AckBody['ids']) => call(notifications.ack, { body: { ids } }),
  notificationHistory: (query: HistoryQuery, signal?: AbortSignal) => call(notifications.history, { query, signal }),

  collectorStats: (signal?: AbortSignal) => call(dashboardEndpoints.collectorStats, { signal }),
  streamStats: (signal?: AbortSignal) => call(dashboardEndpoints.streamStats, { signal }),

  healthHistory: (query: HealthHistoryQuery, signal?: AbortSignal) =>
    call(healthHistoryEndpoints.history, { query, signal }),
  healthEvents: (query: HealthEventsQuery, signal?: AbortSignal) =>
    call(healthHistoryEndpoints.events, { query, signal }),

  acknowledge: (body: AcknowledgeBody) => call(healthAlertEndpoints.acknowledge, { body }),
  unacknowledge: (item: string) => call(healthAlertEndpoints.unacknowledge, { params: { item } }),
  silences: (signal?: AbortSignal) => call(healthAlertEndpoints.listSilences, { signal }),
  silence: (body: SilenceBody) => call(healthAlertEndpoints.silence, { body }),
  unsilence: (id: string) => call(healthAlertEndpoints.unsilence, { params: { id } }),

  collectors: (signal?: AbortSignal) => call(sources.listCollectors, { signal }),
  createCollector: (body: CreateCollectorBody) => call(sources.createCollector, { body }),
  updateCollector: (id: string, body: UpdateCollectorBody) => call(sources.updateCollector, { params: { id }, body }),
  deleteCollector: (id: string) => call(sources.deleteCollector, { params: { id } }),
  startCollector: (id: string) => call(sources.startCollector, { params: { id } }),
  stopCollector: (id: string) => call(sources.stopCollector, { params: { id } }),
  unlockCollector: (id: string, password: string) =>
    call(sources.unlockCollector, { params: { id }, body: { password } }),
  sensors: (collectorId: string, signal?: AbortSignal) =>
    call(sources.listSensors, { params: { id: collectorId }, signal }),

  streams: (signal?: AbortSignal) => call(sources.listStreams, { signal }),
  createStream: (body: CreateStreamBody) => call(sources.createStream, { body }),
  updateStream: (id: string, body: UpdateStreamBody) => call(sources.updateStream, { params: { id }, body }),
  deleteStream: (id: string) => call(sources.deleteStream, { params: { id } }),

  junctions: (signal?: AbortSignal) => call(sources.listJunctions, { signal }),
  createJunction: (body: CreateJunctionBody) => call(sources.createJunction, { body }),
  updateJunction: (id: string, body: UpdateJunctionBody) => call(sources.updateJunction, { params: { id }, body }),
  deleteJunction: (id: string) => call(sources.deleteJunction, { params: { id } }),
  startJunction: (id: string) => call(sources.startJunction, { params: { id } }),
  stopJunction: (id: string) => call(sources.stopJunction, { params: { id } }),

  authStatus: (signal?: AbortSignal) => call(auth.status, { signal }),
  setAuthMode: (mode: AuthMode) => call(auth.setMode, { body: { mode } }),
  setUpLocalAccount: (body: LocalSetupBody) => call(auth.localSetup, { body }),
  signIn: (body: LocalLoginBody) => call(auth.localLogin, { body }),
  signOut: () => call(auth.logout),
  /** Where the browser goes (a full-page navigation, never fetch) to sign in at the cloud. */
  cloudSignInUrl: (query: CloudLoginQuery) => urlOf(auth.cloudLogin, { query }),
  disconnectCloud: () => call(auth.cloudLogout),
  cloudSessions: (signal?: AbortSignal) => call(auth.cloudSessions, { signal }),
  revokeCloudSession: (id: string) => call(auth.deleteCloudSession, { params: { id } }),
  forceTokenRefresh: () => call(auth.forceRefresh),

  backupStatus: (signal?: AbortSignal) => call(backups.status, { signal }),
  saveBackupSettings: (change: BackupSettingsChange) => call(backups.settings, { body: change }),
  backups: (query: Query<typeof backups.list>, signal?: AbortSignal) => call(backups.list, { query, signal }),
  startBackup: () => call(backups.create),
  backupOperations: (signal?: AbortSignal) => call(backups.operations, { signal }),
  backupOperation: (id: string, signal?: AbortSignal) => call(backups.operation, { params: { id }, signal }),
  /** Where a link downloads the backup's ZIP through the relay (a plain navigation: the relay streams it). */
  backupDownloadUrl: (backupId: string) => urlOf(backups.download, { params: { backupId } }),
  restoreBackup: (backupId: string, body: RestoreBody) => call(backups.restore, { params: { backupId }, body }),
  deleteBackup: (backupId: string) => call(backups.remove, { params: { backupId } }),
  backupEncryption: (signal?: AbortSignal) => call(backupEncryptionEndpoints.status, { signal }),
  setBackupPassphrase: (passphrase: string) => call(backupEncryptionEndpoints.set, { body: { passphrase } }),
  removeBackupPassphrase: () => call(backupEncryptionEndpoints.remove),
}
