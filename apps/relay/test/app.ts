import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Clock } from '@relay/server-kit'
import { tempDir } from '@relay/testkit'
import { afterEach } from 'vitest'
import { createApp, type RelayApp } from '../src/app.js'
import { loadConfig, type RelayConfig } from '../src/config.js'

/** Configuration for an app under test: its own data folder, quiet logs, a given web folder. */
export function testConfig(dataDir: string, env: Record<string, string> = {}): RelayConfig {
  return loadConfig({ RELAY_DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env })
}

/** A minimal built UI: an index page and one hashed asset. */
export function writeWebUi(dir: string): string {
  mkdirSync(path.join(dir, 'assets'), { recursive: true })
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Relay</title><div id="root"></div>')
  writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log("relay")')
  return dir
}

/**
 * A relay on a fresh temp data folder (a real SQLite file), closed and removed after the test.
 * Pass the same `dataDir` again to restart on the same data.
 */
export async function startRelay(
  options: {
    dataDir?: string
    webUi?: boolean
    env?: Record<string, string>
    clock?: Clock
    /** Receives every log line (set LOG_LEVEL in `env` to see more than nothing). */
    logStream?: { write(line: string): void }
  } = {},
) {
  const folder = tempDir('relay-test-')
  const dataDir = options.dataDir ?? path.join(folder.path, 'data')
  const webDir = path.join(folder.path, 'web')
  mkdirSync(webDir, { recursive: true })
  if (options.webUi) {
    writeWebUi(webDir)
  }
  const app: RelayApp = await createApp(testConfig(dataDir, { RELAY_WEB_DIR: webDir, ...options.env }), {
    clock: options.clock,
    logStream: options.logStream,
  })
  afterEach(async () => {
    await app.close()
    folder.remove()
  })
  return { app, dataDir, webDir }
}
