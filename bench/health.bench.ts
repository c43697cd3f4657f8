import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createApp as createCloudApp } from '../apps/cloud/src/app.ts'
import { loadConfig as loadCloudConfig } from '../apps/cloud/src/config.ts'
import { createApp as createRelayApp } from '../apps/relay/src/app.ts'
import { loadConfig as loadRelayConfig } from '../apps/relay/src/config.ts'
import type { Benchmark, BenchSettings, Figure } from './lib/benchmark.ts'
import { startMemorySampler } from './lib/memory.ts'
import { createBarePeer, listenLocal } from './lib/servers.ts'
import { measureThroughput, median, type Throughput } from './lib/throughput.ts'

/** Rounds per target; each round measures the peer and ours once, so each gets `rounds` samples. */
const rounds = 3

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

/**
 * Peer and ours alternate within one process, in the order peer-ours, ours-peer, peer-ours…,
 * so drift (CPU heat, GC of earlier runs) falls on both sides; each side reports its median round.
 */
async function compareWithPeer(target: Target, peerUrl: string, settings: BenchSettings): Promise<Figure[]> {
  const app = await target.start()
  const sampler = startMemorySampler()
  const runs = { ours: [] as Throughput[], peer: [] as Throughput[] }
  let peakRssMb = 0
  try {
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['peer', 'ours'] as const) : (['ours', 'peer'] as const)
      for (const side of order) {
        const result = await measureThroughput(side === 'ours' ? app.url : peerUrl, settings)
        runs[side].push(result)
        const summary = `${Math.round(result.requestsPerSecond)} req/s, p99 ${result.p99Ms.toFixed(2)} ms`
        console.error(`  ${target.name} round ${round + 1}/${rounds} ${side}: ${summary}`)
      }
    }
  } finally {
    peakRssMb = sampler.stop()
    await app.close()
  }
  const rps = (side: Throughput[]) => side.map((run) => run.requestsPerSecond)
  const p99 = (side: Throughput[]) => side.map((run) => run.p99Ms)
  const errors = [...runs.ours, ...runs.peer].reduce((sum, run) => sum + run.errors, 0)
  const errorNote = errors > 0 ? `; ${errors} connection errors` : ''
  const spread = (values: (side: Throughput[]) => number[], decimals: number) =>
    `ours ${range(values(runs.ours), decimals)}, peer ${range(values(runs.peer), decimals)}`
  return [
    {
      figure: `${target.name} req/s`,
      ours: median(rps(runs.ours)),
      peer: median(rps(runs.peer)),
      unit: 'req/s',
      peakRssMb,
      notes: `peer: bare Fastify route; median of ${rounds} alternating rounds (${spread(rps, 0)})${errorNote}`,
    },
    {
      figure: `${target.name} p99 latency`,
      ours: median(p99(runs.ours)),
      peer: median(p99(runs.peer)),
      unit: 'ms',
      peakRssMb,
      notes: `peer: bare Fastify route; median of ${rounds} rounds' p99 (${spread(p99, 2)})`,
    },
  ]
}

function range(values: number[], decimals: number): string {
  return `${Math.min(...values).toFixed(decimals)}–${Math.max(...values).toFixed(decimals)}`
}

export const benchmark: Benchmark = {
  name: 'health',
  async run(settings) {
    const peerApp = createBarePeer()
    try {
      const peerUrl = `${await listenLocal(peerApp)}/bare`
      // One target at a time, so each target's peak RSS does not include the other app.
      const figures: Figure[] = []
      for (const target of [relay, cloud]) {
        figures.push(...(await compareWithPeer(target, peerUrl, settings)))
      }
      return figures
    } finally {
      await peerApp.close()
    }
  },
}
