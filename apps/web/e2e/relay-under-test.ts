import path from 'node:path'
import type {
  Collector,
  CollectorStats,
  CreateCollectorBody,
  CreateNotificationBody,
  ErrorBody,
  FeatureFlags,
  FeatureFlagsUpdate,
  Junction,
  Notification,
  NotificationReply,
  Stream,
} from '@relay/contracts'
import { tempDir } from '@relay/testkit'
import { inject } from 'vitest'
import { createApp } from '../../relay/src/app.js'
import { loadConfig } from '../../relay/src/config.js'

export type Reply<T> = { status: number; body: T }

/** A real relay on an ephemeral port, with its own data folder, serving the UI under test. */
export async function startRelay() {
  const folder = tempDir('relay-e2e-')
  const app = await createApp(
    loadConfig({
      RELAY_DATA_DIR: path.join(folder.path, 'data'),
      RELAY_WEB_DIR: inject('webDist'),
      LOG_LEVEL: 'silent',
    }),
  )
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' })

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
    baseUrl,
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
    notification: (id: string) => expectOk(call<Notification>('GET', `/api/notifications/${id}`)),
    flags: () => expectOk(call<FeatureFlags>('GET', '/api/feature-flags')),
    setFlags: (update: FeatureFlagsUpdate) => expectOk(call<FeatureFlags>('PUT', '/api/feature-flags', update)),
    createCollector: (body: CreateCollectorBody) => expectOk(call<Collector>('POST', '/api/collectors', body)),
    startCollector: (id: string) => expectOk(call<Collector>('POST', `/api/collectors/${id}/start`)),
    collector: (id: string) => expectOk(call<Collector>('GET', `/api/collectors/${id}`)),
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
