import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { createHttpBrowser, defined, type HttpBrowser, submitForm } from '@relay/testkit'
import SQLite from 'better-sqlite3'
import { expect } from 'vitest'
import { startTestCloud, type TestCloud } from '../../cloud/test/cloud-server.js'
// The cloud's global setup declares the migrated database templates these tests receive.
import type {} from '../../cloud/test/global-setup.js'
import { open } from '../src/secrets/secret-box.js'
import { startRelay } from './app.js'

export const cloudPassword = 'correct horse battery staple'

/** A clock running with real time, shifted by `offset` ms: the cloud judges token expiry with it. */
export function createShiftedClock() {
  return {
    offset: 0,
    now(): Date {
      return new Date(Date.now() + this.offset)
    },
  }
}

/** The real cloud app on an ephemeral port, over a copy of the migrated PGlite database. */
export function startCloud(clock = createShiftedClock(), env: Record<string, string> = {}): Promise<TestCloud> {
  return startTestCloud('pglite', { clock, env })
}

/** A cloud account with (by default) a gifted Pro license. */
export async function addCloudUser(cloud: TestCloud, options: { licensed?: boolean; name?: string } = {}) {
  const email = `${randomUUID()}@example.com`
  const id = await cloud.addUser(email, cloudPassword, options.name ?? 'Ada')
  if (options.licensed ?? true) {
    await cloud.app.services.licenses.setGifted(id, true)
  }
  return { id, email }
}

/** A relay listening on 127.0.0.1 (cloud sign-in redirects to a loopback address) and talking to `cloud`. */
export async function startLinkedRelay(
  cloud: TestCloud,
  options: Parameters<typeof startRelay>[0] & { logs?: string[] } = {},
) {
  const logs = options.logs ?? []
  const relay = await startRelay({
    ...options,
    env: { CLOUD_URL: cloud.url, LOG_LEVEL: 'debug', ...options.env },
    logStream: { write: (line) => void logs.push(line) },
  })
  const url = await relay.app.listen({ port: 0, host: '127.0.0.1' })
  return { ...relay, url, logs }
}

/**
 * A browser signing the relay in to the cloud: the relay's redirect, the cloud's sign-in page, the
 * cloud's redirect back. Returns the relay's answer to the callback (a redirect into the UI).
 */
export async function signInThroughCloud(
  cloud: TestCloud,
  relayUrl: string,
  email: string,
  {
    browser = createHttpBrowser(),
    query = '',
    cloudUrl = cloud.url,
  }: {
    browser?: HttpBrowser
    query?: string
    /** The cloud's public address, when the relay and the browser reach it through another one. */
    cloudUrl?: string
  } = {},
) {
  const start = await browser.request(`${relayUrl}/api/unified-auth/cloud/login${query}`)
  expect(start.status).toBe(302)
  const toCloud = new URL(defined(start.headers.get('location')))
  expect(toCloud.origin).toBe(cloudUrl)
  const atPage = await browser.follow(toCloud)
  expect(atPage.url.pathname).toMatch(/^\/interaction\//)
  await atPage.response.text()
  const login = await submitForm(browser, new URL(`${atPage.url.pathname}/login`, cloudUrl), {
    email,
    password: cloudPassword,
  })
  expect(login.status).toBe(303)
  const back = await browser.follow(
    new URL(defined(login.headers.get('location')), cloudUrl),
    (next) => next.origin === cloudUrl,
  )
  expect(back.url.origin).toBe(relayUrl)
  expect(back.url.pathname).toBe('/api/unified-auth/cloud/callback')
  const callback = await browser.request(back.url)
  return { callback, callbackUrl: back.url, browser }
}

/** The refresh token stored on disk, opened with the key file: what a thief holding both would have. */
export function storedRefreshToken(dataDir: string): string | undefined {
  const key = readFileSync(path.join(dataDir, 'keys', 'secrets.key'))
  const sqlite = new SQLite(path.join(dataDir, 'relay.db'), { readonly: true })
  try {
    const row = sqlite.prepare('select encrypted_refresh_token as sealed from cloud_sessions').get() as
      | { sealed: string }
      | undefined
    return row && open(key, row.sealed)
  } finally {
    sqlite.close()
  }
}
