import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { migrateToLatest } from '@relay/server-kit'
import { mintAccessToken } from '../apps/cloud/src/auth/tokens.ts'
import { loadConfig } from '../apps/cloud/src/config.ts'
import { openDatabase } from '../apps/cloud/src/db/database.ts'
import { migrations } from '../apps/cloud/src/db/migrations/index.ts'
import { createCloudServices } from '../apps/cloud/src/services.ts'
import {
  type Backend,
  type Balancer,
  type CloudProcess,
  createTimeline,
  probeReadiness,
  type ReadinessProbe,
  startBalancer,
  startCloudProcess,
  terminateConnections,
  waitUntilServing,
} from '../apps/cloud/test/fleet.ts'
import { freePort } from '../packages/testkit/src/http-browser.ts'
import { createDatabase, dropDatabase, uniqueDatabaseName } from '../packages/testkit/src/postgres.ts'
import type { Benchmark, BenchSettings, Figure, Reference } from './lib/benchmark.ts'
import {
  expectNoFailures,
  measureUsers,
  startProcessMemorySampler,
  type UserLoadResult,
  type UserWork,
} from './lib/users.ts'

const userCounts = [1, 10, 100] as const
const seededUsers = 100
const uploadBytes = 16 * 1024
/** The connection-cut run lasts this many measurement durations, the cut at its middle. */
const cutRunDurations = 3
const cutUsers = 10

const adminUrl =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const launcher = path.join(import.meta.dirname, 'lib', 'cloud-instance.ts')

type DeploymentName = 'pglite' | 'pg1' | 'pg3'

const describeDeployment: Record<DeploymentName, string> = {
  pglite: 'PGlite',
  pg1: '1 PG instance',
  pg3: '3 PG instances',
}

type Deployment = {
  name: DeploymentName
  /** Where users send requests: the instance itself, or the balancer in front of three. */
  url: string
  instances: CloudProcess[]
  tokens: string[]
}

type Measured = { result: UserLoadResult; peakRssMb: number }

/**
 * The cloud's backup routes as deployments grow: one instance on PGlite, one on PostgreSQL, three on
 * PostgreSQL behind a round-robin balancer, under 1, 10 and 100 simulated users; then the errors users
 * see when PostgreSQL drops every connection of the three instances once.
 */
export const benchmark: Benchmark = {
  name: 'fleet',
  async run(settings) {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'cloud-bench-fleet-'))
    const logDir = path.join(folder, 'logs')
    mkdirSync(logDir)
    const timeline = createTimeline()
    const databases: string[] = []
    const processes: CloudProcess[] = []
    const probes: ReadinessProbe[] = []
    let balancer: Balancer | undefined
    try {
      const start = (name: string, env: Record<string, string>) => {
        const port = Number(env.CLOUD_PORT)
        const instance = startCloudProcess({
          name,
          port,
          logFile: path.join(logDir, `${name}.log`),
          entry: launcher,
          env: { CLOUD_DEMO_ACCOUNT: 'false', LOG_LEVEL: 'warn', ...env },
        })
        processes.push(instance)
        return instance
      }
      const newDatabase = async (label: string) => {
        const name = uniqueDatabaseName(`relay_bench_${label}`)
        databases.push(name)
        return await createDatabase(adminUrl, name)
      }

      console.error('  seeding three deployments, 100 gifted users each')
      // PGlite: one instance on its own folder, no Redis (the embedded defaults).
      const pglitePort = await freePort()
      const pgliteEnv = {
        CLOUD_DATA_DIR: path.join(folder, 'pglite'),
        CLOUD_PORT: String(pglitePort),
        CLOUD_PUBLIC_URL: `http://127.0.0.1:${pglitePort}`,
      }
      const pgliteTokens = await seedUsers(pgliteEnv)
      // One PostgreSQL instance, with Redis as production runs it.
      const singlePort = await freePort()
      const singleEnv = {
        CLOUD_DATA_DIR: path.join(folder, 'pg1'),
        CLOUD_PORT: String(singlePort),
        CLOUD_PUBLIC_URL: `http://127.0.0.1:${singlePort}`,
        DATABASE_URL: await newDatabase('pg1'),
        REDIS_URL: redisUrl,
      }
      const singleTokens = await seedUsers(singleEnv)
      // Three PostgreSQL instances: one database, one Redis, one objects folder, the balancer's public URL.
      const fleetPort = await freePort()
      const fleetEnv = {
        CLOUD_DATA_DIR: path.join(folder, 'pg3'),
        CLOUD_PUBLIC_URL: `http://127.0.0.1:${fleetPort}`,
        DATABASE_URL: await newDatabase('pg3'),
        REDIS_URL: redisUrl,
      }
      const fleetDatabase = databases.at(-1) as string
      const fleetTokens = await seedUsers({ ...fleetEnv, CLOUD_PORT: String(fleetPort) })

      const pglite = start('pglite', pgliteEnv)
      const single = start('pg1', singleEnv)
      const fleet: CloudProcess[] = []
      for (const i of [1, 2, 3]) {
        fleet.push(start(`pg3-${i}`, { ...fleetEnv, CLOUD_PORT: String(await freePort()) }))
      }
      await Promise.all(processes.map((instance) => waitUntilServing(instance, 90_000)))
      const backends: Backend[] = fleet.map((instance) => {
        const readiness = probeReadiness(instance.url, timeline)
        probes.push(readiness)
        return { name: instance.name, port: instance.port, readiness }
      })
      balancer = await startBalancer(timeline, backends, fleetPort)

      const deployments: Deployment[] = [
        { name: 'pglite', url: pglite.url, instances: [pglite], tokens: pgliteTokens },
        { name: 'pg1', url: single.url, instances: [single], tokens: singleTokens },
        { name: 'pg3', url: balancer.url, instances: fleet, tokens: fleetTokens },
      ]
      const figures: Figure[] = []
      let turn = 0
      for (const work of ['status', 'cycle'] as const) {
        for (const users of userCounts) {
          // The order rotates from one figure to the next, so drift does not always fall on the same deployment.
          const order = deployments.map((_, i) => deployments[(i + turn) % deployments.length] as Deployment)
          turn++
          const measured = {} as Record<DeploymentName, Measured>
          for (const deployment of order) {
            measured[deployment.name] = await measure(deployment, work, users, settings)
          }
          figures.push(...rows(work, users, measured, order))
        }
      }
      figures.push(...(await connectionCut(deployments[2] as Deployment, fleetDatabase, settings)))
      return figures
    } finally {
      for (const probe of probes) {
        await probe.stop()
      }
      await balancer?.close()
      await Promise.all(processes.map((instance) => instance.kill('SIGTERM')))
      for (const name of databases) {
        await dropDatabase(adminUrl, name)
      }
      rmSync(folder, { recursive: true, force: true })
    }
  },
}

/**
 * Migrates the deployment's database and creates its users with the cloud's own services, before any
 * instance starts (PGlite allows one process): a gifted license and a one-hour token each, signed by
 * the key ring every instance reads.
 */
async function seedUsers(env: Record<string, string>): Promise<string[]> {
  const config = loadConfig(env)
  const database = await openDatabase(config)
  try {
    await migrateToLatest(database.db, migrations)
    const services = createCloudServices({ config, database })
    try {
      const tokens: string[] = []
      for (let batch = 0; batch < seededUsers; batch += 10) {
        const created = await Promise.all(
          Array.from({ length: 10 }, async (_, i) => {
            const user = await services.directory.create({
              email: `bench-${batch + i}@example.com`,
              password: 'bench password',
            })
            await services.licenses.setGifted(user.id, true)
            const { token } = await mintAccessToken(services.tokens, {
              subject: user.id,
              type: 'user',
              lifetimeSeconds: 3600,
            })
            return token
          }),
        )
        tokens.push(...created)
      }
      return tokens
    } finally {
      services.storage.store.close()
      await services.close()
    }
  } finally {
    await database.close()
  }
}

async function measure(
  deployment: Deployment,
  work: UserWork,
  users: number,
  settings: BenchSettings,
): Promise<Measured> {
  const pids = deployment.instances.map((instance) => instance.pid).filter((pid) => pid !== undefined)
  const sampler = startProcessMemorySampler(pids)
  let result: UserLoadResult
  let peakRssMb = 0
  try {
    result = await measureUsers({
      baseUrl: deployment.url,
      tokens: deployment.tokens.slice(0, users),
      work,
      warmupSeconds: settings.warmupSeconds,
      durationSeconds: settings.durationSeconds,
      uploadBytes,
    })
  } finally {
    peakRssMb = sampler.stop()
  }
  const label = `${workName(work)}, ${users} user${users === 1 ? '' : 's'}, ${describeDeployment[deployment.name]}`
  expectNoFailures(label, result)
  const summary = `${result.operationsPerSecond.toFixed(1)}/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms`
  console.error(`  ${label}: ${summary}, ${peakRssMb.toFixed(0)} MB`)
  return { result, peakRssMb }
}

function workName(work: UserWork): string {
  return work === 'status' ? 'status' : 'upload cycle'
}

/** For each step PGlite → 1 PG → 3 PG: throughput, p50 and p99, the larger deployment as ours. */
function rows(
  work: UserWork,
  users: number,
  measured: Record<DeploymentName, Measured>,
  order: Deployment[],
): Figure[] {
  const unit = work === 'status' ? 'req/s' : 'cycles/s'
  const what = work === 'status' ? 'fleet status' : 'fleet upload'
  const userLabel = `${users} user${users === 1 ? '' : 's'}`
  const ran = `order ${order.map((d) => describeDeployment[d.name]).join(', ')}`
  const op =
    work === 'status'
      ? 'GET /cloud-backups/status'
      : `request-upload (SHA-256 pinned) + PUT ${uploadBytes / 1024} KB to the presigned URL + complete-upload, then an untimed delete`
  const figures: Figure[] = []
  for (const [ours, peer] of [
    ['pg1', 'pglite'],
    ['pg3', 'pg1'],
  ] as const) {
    const a = measured[ours]
    const b = measured[peer]
    const versus = `${describeDeployment[ours]} vs ${describeDeployment[peer]}`
    const comparedWith: Reference = { kind: 'peer', name: `the same users on ${describeDeployment[peer]}` }
    const overall =
      ours === 'pg3'
        ? `; PGlite → 3 PG ${ratio(a.result.operationsPerSecond, measured.pglite.result.operationsPerSecond)}× ${unit}; ` +
          'the 3 instances sit behind a round-robin balancer in the bench process (one more HTTP hop) and share ' +
          '2 cores with it, the load and the idle deployments, so here they cannot be faster than one'
        : '; PGlite without Redis, 1 PG with Redis (rate-limit bucket and license cache: Redis round trips per request)'
    const notes =
      `${userLabel}${users > 1 ? ', each its own token' : ''}, one request at a time: ${op}; ` +
      `ours ${a.result.operations} ops / ${a.result.requests} requests, peer ${b.result.operations} / ${b.result.requests}` +
      `${work === 'cycle' ? ' (4 requests a cycle, the delete included)' : ''}; ` +
      `peak RSS is the cloud processes', summed: peer ${b.peakRssMb.toFixed(0)} MB; one round each, ${ran}${overall}`
    figures.push(
      {
        figure: `${what} ${unit} (${userLabel}), ${versus}`,
        ours: a.result.operationsPerSecond,
        reference: b.result.operationsPerSecond,
        comparedWith,
        unit,
        peakRssMb: a.peakRssMb,
        notes,
      },
      {
        figure: `${what} p50 latency (${userLabel}), ${versus}`,
        ours: a.result.p50Ms,
        reference: b.result.p50Ms,
        comparedWith,
        unit: 'ms',
        peakRssMb: a.peakRssMb,
        notes,
      },
      {
        figure: `${what} p99 latency (${userLabel}), ${versus}`,
        ours: a.result.p99Ms,
        reference: b.result.p99Ms,
        comparedWith,
        unit: 'ms',
        peakRssMb: a.peakRssMb,
        notes,
      },
    )
  }
  return figures
}

function ratio(a: number, b: number): string {
  return b > 0 ? (a / b).toFixed(2) : '–'
}

/**
 * The upload cycle with 10 users on the three instances for `cutRunDurations` measurement durations;
 * in the middle, PostgreSQL terminates every connection of the fleet's database once.
 */
async function connectionCut(fleet: Deployment, database: string, settings: BenchSettings): Promise<Figure[]> {
  const durationSeconds = settings.durationSeconds * cutRunDurations
  const pids = fleet.instances.map((instance) => instance.pid).filter((pid) => pid !== undefined)
  const sampler = startProcessMemorySampler(pids)
  let peakRssMb = 0
  let cutAt = 0
  let terminated = 0
  const cut = (async () => {
    await new Promise((resolve) => setTimeout(resolve, (settings.warmupSeconds + durationSeconds / 2) * 1000))
    cutAt = Date.now()
    terminated = await terminateConnections(adminUrl, database)
  })()
  // Awaited after the load; until then a failure must not surface as an unhandled rejection.
  cut.catch(() => {})
  let result: UserLoadResult
  try {
    result = await measureUsers({
      baseUrl: fleet.url,
      tokens: fleet.tokens.slice(0, cutUsers),
      work: 'cycle',
      warmupSeconds: settings.warmupSeconds,
      durationSeconds,
      uploadBytes,
    })
    await cut
  } finally {
    peakRssMb = sampler.stop()
  }
  const unavailable = result.failures['503'] ?? 0
  const other = Object.values(result.failures).reduce((sum, count) => sum + count, 0) - unavailable
  const otherKinds = Object.entries(result.failures).filter(([status]) => status !== '503')
  const alive = fleet.instances.filter((instance) => instance.exit === undefined).length
  const window =
    result.firstFailureAt === undefined
      ? 'no failure'
      : `failures from ${signed(result.firstFailureAt - cutAt)} to ${signed((result.lastFailureAt ?? cutAt) - cutAt)} ms after the cut`
  const notes =
    `${cutUsers} users backing up through the balancer for ${durationSeconds} s; ` +
    `pg_terminate_backend of all ${terminated} connections to the fleet's database once, at ${durationSeconds / 2} s; ` +
    `${result.requests} requests, ${result.operations} cycles completed (${result.operationsPerSecond.toFixed(1)}/s), ` +
    `${unavailable} answered 503, ${other} other errors${otherKinds.length > 0 ? ` (${otherKinds.map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}; ` +
    `${window}; a user waits 1 s after a failed step; ${alive} of ${fleet.instances.length} instances alive after; ` +
    'peak RSS: the three cloud processes, summed' +
    (result.failureSamples.length > 0 ? `; e.g. ${result.failureSamples[0]?.replace(/[|\n]/g, ' ')}` : '')
  console.error(`  connection cut: ${notes}`)
  const row = (figure: string, value: number, unit: string): Figure => ({
    figure,
    ours: value,
    reference: null,
    comparedWith: { kind: 'none', name: 'the uncut runs above, which have no error' },
    unit,
    peakRssMb,
    notes,
  })
  return [
    row('fleet connection cut: requests (10 users, upload cycle, 3 PG instances)', result.requests, 'requests'),
    row('fleet connection cut: 503 answers', unavailable, 'requests'),
    row('fleet connection cut: other errors (non-503 answers, no answer)', other, 'requests'),
  ]
}

function signed(ms: number): string {
  return ms >= 0 ? `+${ms}` : String(ms)
}
