import path from 'node:path'
import {
  type AuthStatus,
  type Collector,
  type CollectorStats,
  type CreateCollectorBody,
  type CreateNotificationBody,
  type ErrorBody,
  type FeatureFlags,
  type FeatureFlagsUpdate,
  type Junction,
  type Notification,
  type NotificationReply,
  type Stream,
  unifiedAuthRoutes,
} from '@relay/contracts'
import { tempDir, waitFor } from '@relay/testkit'
import { inject } from 'vitest'
import { createApp } from '../../relay/src/app.js'
import { loadConfig } from '../../relay/src/config.js'

export type Reply<T> = { status: number; body: T }

export type RelayOptions = {
  /** Finish first-run setup in mode none, as most tests want a relay that is open to them (default true). */
  setup?: boolean
  /** More configuration for loadConfig, e.g. CLOUD_URL. */
  env?: Record<string, string>
}

/** A real relay on an ephemeral port, with its own data folder, serving the UI under test. */
export async function startRelay({ setup = true, env = {} }: RelayOptions = {}) {
  const folder = tempDir('relay-e2e-')
  const dataDir = path.join(folder.path, 'data')
  const app = await createApp(
    loadConfig({
      RELAY_DATA_DIR: dataDir,
      RELAY_WEB_DIR: inject('webDist'),
      LOG_LEVEL: 'silent',
      ...env,
    }),
  )
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' })
  if (setup) {
    await finishSetup(baseUrl)
  }

  async function call<T>(method: string, url: string, body?: unknown): Promise<Reply<T>> {
    const response = await fetch(`${baseUrl}${url}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as T }
  }

  async function expectOk<T>(reply: Promise<Reply<T | ErrorBody>>): Promise<T> {
    const { status, body } = await reply
    if (status >= 300) {
      throw new Error(`relay answered ${status}: ${JSON.stringify(body)}`)
    }
    return body as T
  }

  return {
    app,
    baseUrl,
    /** The relay's data folder (database, keys, identity). */
    dataDir,
    call,
    /** Creates a notification through POST /api/notifications, one at a time, so they keep their order. */
    async notify(body: CreateNotificationBody): Promise<Notification> {
      const reply = await expectOk(call<NotificationReply>('POST', '/api/notifications', body))
      return reply.notification
    },
    async notifyAll(bodies: readonly CreateNotificationBody[]): Promise<Notification[]> {
      const created: Notification[] = []
      for (const body of bodies) {
        created.push(await this.notify(body))
      }
      return created
    },
    /** The status as a browser without a session sees it. */
    authStatus: () => expectOk(call<AuthStatus>('GET', unifiedAuthRoutes.status.url)),
    notification: (id: string) => expectOk(call<Notification>('GET', `/api/notifications/${id}`)),
    flags: () => expectOk(call<FeatureFlags>('GET', '/api/feature-flags')),
    setFlags: (update: FeatureFlagsUpdate) => expectOk(call<FeatureFlags>('PUT', '/api/feature-flags', update)),
    createCollector: (body: CreateCollectorBody) => expectOk(call<Collector>('POST', '/api/collectors', body)),
    startCollector: (id: string) => expectOk(call<Collector>('POST', `/api/collectors/${id}/start`)),
    collector: (id: string) => expectOk(call<Collector>('GET', `/api/collectors/${id}`)),
    /** A running API collector that nothing answers (port 1 refuses), once its first fetch has failed. */
    async failingCollector(name: string): Promise<Collector> {
      const settings = { url: 'http://127.0.0.1:1/data' }
      const { id } = await this.createCollector({ name, collectorType: 'GenericAPI', pollRateMs: 1000, settings })
      await this.startCollector(id)
      await waitFor(async () => (await this.collector(id)).lastFetchTime !== null, `a first fetch by ${name}`)
      return this.collector(id)
    },
    collectors: () => expectOk(call<Collector[]>('GET', '/api/collectors')),
    collectorStats: () => expectOk(call<CollectorStats>('GET', '/api/collectors/stats')),
    streams: () => expectOk(call<Stream[]>('GET', '/api/connections/streams')),
    junctions: () => expectOk(call<Junction[]>('GET', '/api/junctions')),
    async close() {
      await app.close()
      folder.remove()
    },
  }
}

export type RelayUnderTest = Awaited<ReturnType<typeof startRelay>>

/** Takes a fresh relay past its setup screen in mode none (no sign-in). */
export async function finishSetup(baseUrl: string): Promise<void> {
  const { method, url } = unifiedAuthRoutes.setMode
  const response = await fetch(`${baseUrl}${url}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode: 'none' }),
  })
  if (!response.ok) {
    throw new Error(`setup in mode none failed: ${response.status} ${await response.text()}`)
  }
}
