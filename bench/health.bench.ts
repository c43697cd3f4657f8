import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createApp as createCloudApp } from '../apps/cloud/src/app.ts'
import { loadConfig as loadCloudConfig } from '../apps/cloud/src/config.ts'
import { createApp as createRelayApp } from '../apps/relay/src/app.ts'
import { loadConfig as loadRelayConfig } from '../apps/relay/src/config.ts'
import { type Benchmark, type BenchSettings, bareRoute, type Figure } from './lib/benchmark.ts'
import { compareWithReference } from './lib/compare.ts'
import { createBareRoutes, listenLocal } from './lib/servers.ts'

type Started = { url: string; close(): Promise<void> }

type Target = { name: string; start(): Promise<Started> }

const relay: Target = {
  name: 'relay /api/health',
  async start() {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'relay-bench-data-'))
    const webDir = mkdtempSync(path.join(os.tmpdir(), 'relay-bench-web-'))
    const env = { RELAY_DATA_DIR: dataDir, LOG_LEVEL: 'silent', RELAY_WEB_DIR: webDir }
    return startApp(() => createRelayApp(loadRelayConfig(env)), '/api/health', [dataDir, webDir])
  },
}

const cloud: Target = {
  name: 'cloud /healthz',
  async start() {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'cloud-bench-data-'))
    const env = { CLOUD_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }
    return startApp(() => createCloudApp(loadCloudConfig(env)), '/healthz', [dataDir])
  },
}

type App = Parameters<typeof listenLocal>[0] & { close(): Promise<unknown> }

async function startApp(create: () => Promise<App>, route: string, tempDirs: string[]): Promise<Started> {
  const removeTempDirs = () => {
    for (const dir of tempDirs) {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  let app: App | undefined
  try {
    app = await create()
    const url = `${await listenLocal(app)}${route}`
    const opened = app
    return {
      url,
      async close() {
        await opened.close()
        removeTempDirs()
      },
    }
  } catch (err) {
    await app?.close()
    removeTempDirs()
    throw err
  }
}

async function measureTarget(target: Target, bareUrl: string, settings: BenchSettings): Promise<Figure[]> {
  const app = await target.start()
  try {
    const figures = { throughput: `${target.name} req/s`, latency: `${target.name} p99 latency` }
    const comparison = { label: target.name, figures, ours: app.url, reference: bareUrl, comparedWith: bareRoute }
    return await compareWithReference(comparison, settings)
  } finally {
    await app.close()
  }
}

export const benchmark: Benchmark = {
  name: 'health',
  async run(settings) {
    const bare = createBareRoutes()
    try {
      const bareUrl = `${await listenLocal(bare)}/bare`
      // One target at a time, so each target's peak RSS does not include the other app.
      const figures: Figure[] = []
      for (const target of [relay, cloud]) {
        figures.push(...(await measureTarget(target, bareUrl, settings)))
      }
      return figures
    } finally {
      await bare.close()
    }
  },
}
