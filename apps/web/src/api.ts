import {
  type AckBody,
  type AuthMode,
  type AuthStatus,
  type BackupList,
  type BackupOperation,
  type BackupSettings,
  type BackupSettingsChange,
  type BackupStatusReply,
  type CloudLoginQuery,
  type CloudSessionList,
  type Collector,
  type CollectorStats,
  type CreateCollectorBody,
  type CreateJunctionBody,
  type CreateStreamBody,
  dashboardRoutes,
  type ErrorBody,
  type ErrorCode,
  type FeatureFlags,
  type FeatureFlagsUpdate,
  type ForceRefreshReply,
  featureFlagRoutes,
  getRelayHealth,
  type HistoryQuery,
  type HistoryReply,
  isErrorBody,
  type Junction,
  type LocalLoginBody,
  type LocalSetupBody,
  type ModeBody,
  notificationRoutes,
  type OperationList,
  type OperationStarted,
  type PendingReply,
  type RelayBackupListQuery,
  type RelayHealth,
  type RestoreBody,
  relayBackupRoutes,
  type Sensor,
  type SignedInReply,
  type Stream,
  type StreamStats,
  sourceRoutes,
  type UpdateCollectorBody,
  type UpdateCollectorReply,
  type UpdateJunctionBody,
  type UpdateStreamBody,
  unifiedAuthRoutes,
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

export type GetJsonOptions = {
  signal?: AbortSignal
  /** Non-2xx statuses whose body is data by contract (health answers 503 with a full report). */
  dataStatuses?: readonly number[]
}

export function getJson<T>(path: string, { signal, dataStatuses = [] }: GetJsonOptions = {}): Promise<T> {
  return request<T>(path, { method: 'GET', signal }, dataStatuses)
}

/** Sends `body` as JSON; the answer is parsed, or thrown as an `ApiError` exactly as `getJson` does. */
export function sendJson<T>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body: unknown): Promise<T> {
  return request<T>(path, { method, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }, [])
}

/**
 * A request without a body, such as `POST …/start`. No content type is sent: the relay rejects an
 * empty body that claims to be JSON.
 */
export function sendEmpty<T>(method: 'POST' | 'DELETE', path: string): Promise<T> {
  return request<T>(path, { method }, [])
}

async function request<T>(path: string, init: RequestInit, dataStatuses: readonly number[]): Promise<T> {
  let response: Response
  try {
    response = await fetch(path, {
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

/** A route's url with its `:id` (or another named parameter) filled in. */
function withId(url: string, id: string, param = 'id'): string {
  return url.replace(`:${param}`, encodeURIComponent(id))
}

const withBackupId = (url: string, backupId: string) => withId(url, backupId, 'backupId')

/** `path?key=value…` with the defined values only. */
function withQuery(path: string, query: Readonly<Record<string, string | number | undefined>>): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) {
      params.set(key, String(value))
    }
  }
  const search = params.toString()
  return search ? `${path}?${search}` : path
}

export const api = {
  health: (signal?: AbortSignal) =>
    getJson<RelayHealth>(getRelayHealth.url, { signal, dataStatuses: dataStatusesOf(getRelayHealth) }),

  featureFlags: (signal?: AbortSignal) => getJson<FeatureFlags>(featureFlagRoutes.get.url, { signal }),
  updateFeatureFlags: (update: FeatureFlagsUpdate) =>
    sendJson<FeatureFlags>(featureFlagRoutes.update.method, featureFlagRoutes.update.url, update),

  pendingNotifications: (since: number | undefined, signal?: AbortSignal) =>
    getJson<PendingReply>(withQuery(notificationRoutes.pending.url, { since }), { signal }),
  acknowledgeNotifications: (ids: AckBody['ids']) =>
    sendJson<{ success: true; acknowledged: number }>(notificationRoutes.ack.method, notificationRoutes.ack.url, {
      ids,
    } satisfies AckBody),
  notificationHistory: (query: HistoryQuery, signal?: AbortSignal) =>
    getJson<HistoryReply>(withQuery(notificationRoutes.history.url, query), { signal }),

  collectorStats: (signal?: AbortSignal) => getJson<CollectorStats>(dashboardRoutes.collectorStats.url, { signal }),
  streamStats: (signal?: AbortSignal) => getJson<StreamStats>(dashboardRoutes.streamStats.url, { signal }),

  collectors: (signal?: AbortSignal) => getJson<Collector[]>(sourceRoutes.listCollectors.url, { signal }),
  createCollector: (body: CreateCollectorBody) =>
    sendJson<Collector>(sourceRoutes.createCollector.method, sourceRoutes.createCollector.url, body),
  updateCollector: (id: string, body: UpdateCollectorBody) =>
    sendJson<UpdateCollectorReply>(
      sourceRoutes.updateCollector.method,
      withId(sourceRoutes.updateCollector.url, id),
      body,
    ),
  deleteCollector: (id: string) =>
    sendEmpty<{ success: true }>(sourceRoutes.deleteCollector.method, withId(sourceRoutes.deleteCollector.url, id)),
  startCollector: (id: string) =>
    sendEmpty<Collector>(sourceRoutes.startCollector.method, withId(sourceRoutes.startCollector.url, id)),
  stopCollector: (id: string) =>
    sendEmpty<Collector>(sourceRoutes.stopCollector.method, withId(sourceRoutes.stopCollector.url, id)),
  unlockCollector: (id: string, password: string) =>
    sendJson<Collector>(sourceRoutes.unlockCollector.method, withId(sourceRoutes.unlockCollector.url, id), {
      password,
    }),
  sensors: (collectorId: string, signal?: AbortSignal) =>
    getJson<Sensor[]>(withId(sourceRoutes.listSensors.url, collectorId), { signal }),

  streams: (signal?: AbortSignal) => getJson<Stream[]>(sourceRoutes.listStreams.url, { signal }),
  createStream: (body: CreateStreamBody) =>
    sendJson<Stream>(sourceRoutes.createStream.method, sourceRoutes.createStream.url, body),
  updateStream: (id: string, body: UpdateStreamBody) =>
    sendJson<Stream>(sourceRoutes.updateStream.method, withId(sourceRoutes.updateStream.url, id), body),
  deleteStream: (id: string) =>
    sendEmpty<{ success: true }>(sourceRoutes.deleteStream.method, withId(sourceRoutes.deleteStream.url, id)),

  junctions: (signal?: AbortSignal) => getJson<Junction[]>(sourceRoutes.listJunctions.url, { signal }),
  createJunction: (body: CreateJunctionBody) =>
    sendJson<Junction>(sourceRoutes.createJunction.method, sourceRoutes.createJunction.url, body),
  updateJunction: (id: string, body: UpdateJunctionBody) =>
    sendJson<Junction>(sourceRoutes.updateJunction.method, withId(sourceRoutes.updateJunction.url, id), body),
  deleteJunction: (id: string) =>
    sendEmpty<{ success: true }>(sourceRoutes.deleteJunction.method, withId(sourceRoutes.deleteJunction.url, id)),
  startJunction: (id: string) =>
    sendEmpty<Junction>(sourceRoutes.startJunction.method, withId(sourceRoutes.startJunction.url, id)),
  stopJunction: (id: string) =>
    sendEmpty<Junction>(sourceRoutes.stopJunction.method, withId(sourceRoutes.stopJunction.url, id)),

  authStatus: (signal?: AbortSignal) => getJson<AuthStatus>(unifiedAuthRoutes.status.url, { signal }),
  setAuthMode: (mode: AuthMode) =>
    sendJson<{ success: true; mode: AuthMode }>(unifiedAuthRoutes.setMode.method, unifiedAuthRoutes.setMode.url, {
      mode,
    } satisfies ModeBody),
  setUpLocalAccount: (body: LocalSetupBody) =>
    sendJson<SignedInReply>(unifiedAuthRoutes.localSetup.method, unifiedAuthRoutes.localSetup.url, body),
  signIn: (body: LocalLoginBody) =>
    sendJson<SignedInReply>(unifiedAuthRoutes.localLogin.method, unifiedAuthRoutes.localLogin.url, body),
  signOut: () => sendEmpty<{ success: true }>(unifiedAuthRoutes.logout.method, unifiedAuthRoutes.logout.url),
  /** Where the browser goes (a full-page navigation, never fetch) to sign in at the cloud. */
  cloudSignInUrl: (query: CloudLoginQuery) => withQuery(unifiedAuthRoutes.cloudLogin.url, query),
  disconnectCloud: () =>
    sendEmpty<{ success: true }>(unifiedAuthRoutes.cloudLogout.method, unifiedAuthRoutes.cloudLogout.url),
  cloudSessions: (signal?: AbortSignal) => getJson<CloudSessionList>(unifiedAuthRoutes.cloudSessions.url, { signal }),
  revokeCloudSession: (id: string) =>
    sendEmpty<{ success: true }>(
      unifiedAuthRoutes.deleteCloudSession.method,
      withId(unifiedAuthRoutes.deleteCloudSession.url, id),
    ),
  forceTokenRefresh: () =>
    sendEmpty<ForceRefreshReply>(unifiedAuthRoutes.forceRefresh.method, unifiedAuthRoutes.forceRefresh.url),

  backupStatus: (signal?: AbortSignal) => getJson<BackupStatusReply>(relayBackupRoutes.status.url, { signal }),
  saveBackupSettings: (change: BackupSettingsChange) =>
    sendJson<{ success: true; settings: BackupSettings }>(
      relayBackupRoutes.settings.method,
      relayBackupRoutes.settings.url,
      change,
    ),
  backups: (query: Partial<Pick<RelayBackupListQuery, 'limit'>>, signal?: AbortSignal) =>
    getJson<BackupList>(withQuery(relayBackupRoutes.list.url, query), { signal }),
  startBackup: () => sendEmpty<OperationStarted>(relayBackupRoutes.create.method, relayBackupRoutes.create.url),
  backupOperations: (signal?: AbortSignal) => getJson<OperationList>(relayBackupRoutes.operations.url, { signal }),
  backupOperation: (id: string, signal?: AbortSignal) =>
    getJson<BackupOperation>(withId(relayBackupRoutes.operation.url, id), { signal }),
  /** Where a link downloads the backup's ZIP through the relay (a plain navigation: the relay streams it). */
  backupDownloadUrl: (backupId: string) => withBackupId(relayBackupRoutes.download.url, backupId),
  restoreBackup: (backupId: string, body: RestoreBody) =>
    sendJson<OperationStarted>(
      relayBackupRoutes.restore.method,
      withBackupId(relayBackupRoutes.restore.url, backupId),
      body,
    ),
  deleteBackup: (backupId: string) =>
    sendEmpty<{ success: true }>(relayBackupRoutes.remove.method, withBackupId(relayBackupRoutes.remove.url, backupId)),
}
