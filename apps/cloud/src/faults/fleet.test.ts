import { existsSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { backupQuota, pendingLapsesAfter } from '@relay/contracts'
import {
  createDatabase,
  defined,
  dropDatabase,
  freePort,
  seededRandom,
  tempDir,
  uniqueDatabaseName,
} from '@relay/testkit'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import {
  type Backend,
  type Balancer,
  type CloudProcess,
  createTimeline,
  type Outcome,
  objectFile as objectPath,
  type Probe,
  probeReadiness,
  type ReadinessProbe,
  runRelay,
  type Stamp,
  startBalancer,
  startCloudProcess,
  startRedisGate,
  terminateConnections,
  waitUntilServing,
} from '../../test/fleet.js'
import { redisRequirement, testRedisUrl } from '../../test/redis.js'
import { mintAccessToken } from '../auth/tokens.js'
import { releaseLapsedBackups } from '../backups/cleanup.js'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { createCloudServices } from '../services.js'

/**
 * Three cloud processes on one PostgreSQL, one Redis and one objects folder, behind a round-robin
 * balancer, with 50 relays backing up through it while the database drops every connection three
 * times, one instance loses Redis and another is killed. What must hold afterwards: the survivors
 * serve, clients saw errors only where a fault explains them, quotas and records are consistent and
 * no rejected or abandoned upload keeps its file.
 */

const template = inject('postgresTemplate')
const runnable = template !== null && redisRequirement.available
if (!runnable && template === null) {
  console.warn('[skip] fleet fault suite: needs PostgreSQL (TEST_DATABASE_URL)')
}

const RELAYS = 50
const LOAD_MS = 45_000
/** How long after a fault its errors are accepted: a pool reconnecting, a balancer noticing. */
const FAULT_WINDOW_MS = 5000
const BUCKET = 'relay-backups'

type Fault = { kind: 'pg-cut' | 'redis-cut' | 'redis-restore' | 'kill'; at: Stamp; instance?: string; detail?: string }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.skipIf(!runnable)('a fleet of three cloud instances under faults', () => {
  const timeline = createTimeline()
  let folder: ReturnType<typeof tempDir> | undefined
  let dataDir = ''
  let logDir = ''
  const databaseName = uniqueDatabaseName('relay_cloud_fleet')
  let databaseUrl = ''
  const instances: CloudProcess[] = []
  const probes: ReadinessProbe[] = []
  let balancer: Balancer | undefined
  let redisGate: Awaited<ReturnType<typeof startRedisGate>> | undefined
  const outcomes: Outcome[] = []
  const faults: Fault[] = []
  const users: { id: string; token: string }[] = []
  let stopLoad = false
  let relays: Promise<void>[] = []
  let failed = false
  const timings: Record<string, number> = {}
  /** Instance 3 started again after its kill, against a Redis port nobody listens on. */
  let revived: CloudProcess | undefined

  const instanceEnv = (publicUrl: string, redisUrl: string) => ({
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    CLOUD_PUBLIC_URL: publicUrl,
    CLOUD_DATA_DIR: dataDir,
    CLOUD_DEMO_ACCOUNT: 'false',
    LOG_LEVEL: 'warn',
  })

  beforeAll(async () => {
    const started = timeline.now()
    if (!template) {
      return
    }
    folder = tempDir('relay-fleet-')
    dataDir = path.join(folder.path, 'data')
    logDir = path.join(folder.path, 'logs')
    mkdirSync(dataDir, { recursive: true })
    mkdirSync(logDir, { recursive: true })
    databaseUrl = await createDatabase(template.url, databaseName, template.name)
    const balancerPort = await freePort()
    const publicUrl = `http://127.0.0.1:${balancerPort}`

    // Seeding in this process with the cloud's own services: accounts, gifted licenses and tokens
    // signed by the key ring every instance reads. Also writes the embedded store's credentials
    // into the shared folder before any instance starts.
    const seedConfig = loadConfig({ CLOUD_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, CLOUD_PUBLIC_URL: publicUrl })
    const database = await openDatabase(seedConfig)
    const services = createCloudServices({ config: seedConfig, database })
    try {
      for (let batch = 0; batch < RELAYS; batch += 10) {
        const created = await Promise.all(
          Array.from({ length: Math.min(10, RELAYS - batch) }, async (_, i) => {
            const user = await services.directory.create({
              email: `fleet-${batch + i}@example.com`,
              password: 'correct horse battery',
            })
            await services.licenses.setGifted(user.id, true)
            const { token } = await mintAccessToken(services.tokens, {
              subject: user.id,
              type: 'user',
              lifetimeSeconds: 3600,
            })
            return { id: user.id, token }
          }),
        )
        users.push(...created)
      }
    } finally {
      await services.close()
      await database.close()
    }
    timings.seedMs = timeline.now() - started

    redisGate = await startRedisGate(redisTarget())
    const ports = [await freePort(), await freePort(), await freePort()]
    for (const [i, port] of ports.entries()) {
      const redisUrl = i === 1 ? redisGate.url : testRedisUrl
      instances.push(
        startCloudProcess({
          name: `cloud-${i + 1}`,
          port,
          logFile: path.join(logDir, `cloud-${i + 1}.log`),
          env: instanceEnv(publicUrl, redisUrl),
        }),
      )
    }
    await Promise.all(instances.map((instance) => waitUntilServing(instance, 60_000)))
    timings.startMs = timeline.now() - started - timings.seedMs

    const backends: Backend[] = instances.map((instance) => {
      const readiness = probeReadiness(instance.url, timeline)
      probes.push(readiness)
      return { name: instance.name, port: instance.port, readiness }
    })
    balancer = await startBalancer(timeline, backends, balancerPort)

    // --- the load, and the faults during it ---
    const loadStart = timeline.now()
    relays = users.map((user, index) =>
      runRelay({
        index,
        token: user.token,
        baseUrl: publicUrl,
        timeline,
        outcomes,
        stopped: () => stopLoad,
        random: seededRandom(1000 + index),
      }),
    )
    const at = (ms: number) => sleep(Math.max(0, loadStart + ms - timeline.now()))
    const [cloud1, cloud2, cloud3] = instances as [CloudProcess, CloudProcess, CloudProcess]
    for (const ms of [6000, 10_000, 14_000]) {
      await at(ms)
      const cutAt = timeline.now()
      const terminated = await terminateConnections(template.url, databaseName)
      faults.push({ kind: 'pg-cut', at: cutAt, detail: `${terminated} connections` })
    }
    await at(20_000)
    faults.push({ kind: 'redis-cut', at: timeline.now(), instance: cloud2.name })
    await redisGate.cut()
    await at(26_000)
    faults.push({ kind: 'kill', at: timeline.now(), instance: cloud3.name })
    await cloud3.kill('SIGKILL')
    await at(34_000)
    await redisGate.restore()
    faults.push({ kind: 'redis-restore', at: timeline.now(), instance: cloud2.name })
    await at(LOAD_MS)
    stopLoad = true
    await Promise.all(relays)
    timings.loadMs = timeline.now() - loadStart

    // Survivors must come back to ready by themselves.
    const settleStart = timeline.now()
    const survivors = [cloud1, cloud2].map((instance) => defined(probes[instances.indexOf(instance)]))
    while (timeline.now() - settleStart < 15_000 && !survivors.every((probe) => probe.ready())) {
      await sleep(250)
    }
    timings.settleMs = timeline.now() - settleStart

    // The killed instance comes back pointed at a Redis port nobody listens on.
    const deadRedis = `redis://127.0.0.1:${await freePort()}`
    const reviveStart = timeline.now()
    revived = startCloudProcess({
      name: 'cloud-3-revived',
      port: cloud3.port,
      logFile: path.join(logDir, 'cloud-3-revived.log'),
      env: instanceEnv(publicUrl, deadRedis),
    })
    await waitUntilServing(revived, 60_000).catch(() => {})
    timings.reviveMs = timeline.now() - reviveStart
  }, 240_000)

  afterEach((context) => {
    if (context.task.result?.state === 'fail') {
      failed = true
    }
  })

  afterAll(async () => {
    stopLoad = true
    await Promise.all(relays)
    await Promise.all(probes.map((probe) => probe.stop()))
    await Promise.all([...instances, ...(revived ? [revived] : [])].map((instance) => instance.kill('SIGKILL')))
    await balancer?.close()
    await redisGate?.close()
    if (template && databaseUrl) {
      await dropDatabase(template.url, databaseName)
    }
    console.log(`[fleet] timings (ms): ${JSON.stringify(timings)}`)
    console.log(`[fleet] ${summary()}`)
    const errors = outcomes.filter(isError)
    console.log(
      `[fleet] ${errors.length} client errors, all within a fault's reach or not:\n${errors.map(show).join('\n')}`,
    )
    for (const [index, probe] of probes.entries()) {
      const notReady = probe.probes.filter((p) => p.status !== 200)
      console.log(
        `[fleet] cloud-${index + 1} /readyz: ${probe.probes.length} probes, not ready: ${notReady
          .slice(0, 8)
          .map((p) => `t=${p.at} ${showProbe(p)}`)
          .join(' | ')}${notReady.length > 8 ? ` … (${notReady.length})` : ''}`,
      )
    }
    if (failed) {
      // Kept for the failure report: every instance's log and the objects folder.
      console.log(`[fleet] logs kept in ${logDir}`)
    } else {
      folder?.remove()
    }
  }, 60_000)

  function instance(name: string): CloudProcess {
    return defined(
      instances.find((i) => i.name === name),
      name,
    )
  }

  function token(): string {
    return defined(users[0], 'user').token
  }

  it('ran the load: relays uploaded through every instance', () => {
    const completed = outcomes.filter((o) => o.step === 'complete-upload' && o.status === 200)
    expect(completed.length, summary()).toBeGreaterThan(RELAYS)
    const byInstance = new Set(outcomes.filter((o) => o.status === 200).map((o) => o.backend))
    expect([...byInstance].sort()).toEqual(expect.arrayContaining(['cloud-1', 'cloud-2', 'cloud-3']))
  })

  it('keeps every instance that was not killed alive and serving', async () => {
    for (const name of ['cloud-1', 'cloud-2']) {
      const cloud = instance(name)
      expect(cloud.exit, `${name} exited:\n${cloud.tail()}`).toBeUndefined()
      const health = await fetch(`${cloud.url}/healthz`, { signal: AbortSignal.timeout(5000) })
      expect(health.status, name).toBe(200)
      const status = await fetch(`${cloud.url}/cloud-backups/status`, {
        headers: { authorization: `Bearer ${token()}` },
        signal: AbortSignal.timeout(5000),
      })
      expect(status.status, `${name}: ${await status.text()}`).toBe(200)
    }
  })

  it('shows clients errors only from the killed instance or within seconds of a fault', () => {
    const unexplained = outcomes.filter((o) => isError(o) && !explained(o))
    expect(unexplained.map(show), summary()).toEqual([])
  })

  it('refuses no relay for a reason the faults do not explain', () => {
    // 429 is the rate limit doing its job; UPLOAD_MISMATCH is the answer to a wrong size on purpose.
    const refused = outcomes.filter(
      (o) =>
        o.status >= 400 &&
        o.status < 500 &&
        o.status !== 429 &&
        !(o.step === 'complete-wrong-size' && o.code === 'UPLOAD_MISMATCH'),
    )
    expect(refused.map(show), summary()).toEqual([])
  })

  it('says not ready while a dependency is down, and ready again once it is back', () => {
    const cut = defined(faults.find((f) => f.kind === 'redis-cut'))
    const restored = defined(faults.find((f) => f.kind === 'redis-restore'))
    const cloud2 = defined(probes[1]).probes
    const duringOutage = cloud2.filter((p) => p.at > cut.at && p.at < restored.at)
    expect(duringOutage.map(showProbe), 'cloud-2 /readyz while its Redis was gone').toContainEqual(
      expect.stringMatching(/^503 .*redis/i),
    )
    for (const [index, name] of [
      [0, 'cloud-1'],
      [1, 'cloud-2'],
    ] as const) {
      const last = defined(probes[index]).probes.at(-1)
      expect(last && showProbe(last), `${name} /readyz at the end`).toMatch(/^200 /)
    }
  })

  it('starts against a dead Redis: alive, not ready, and answering without waiting on Redis', async () => {
    const cloud = defined(revived, 'revived instance')
    expect(cloud.exit, `revived instance exited:\n${cloud.tail()}`).toBeUndefined()
    expect((await fetch(`${cloud.url}/healthz`, { signal: AbortSignal.timeout(5000) })).status).toBe(200)
    const ready = await fetch(`${cloud.url}/readyz`, { signal: AbortSignal.timeout(5000) })
    expect(`${ready.status} ${await ready.text()}`).toMatch(/^503 .*redis/i)
    // Served without Redis, or refused as unavailable; either way it answers, well before a relay gives up.
    const status = await fetch(`${cloud.url}/cloud-backups/status`, {
      headers: { authorization: `Bearer ${token()}` },
      signal: AbortSignal.timeout(5000),
    })
    expect([200, 503], await status.text()).toContain(status.status)
  })

  it("keeps every user's storage and count within quota", async () => {
    const rows = await query<{ user_id: string; bytes: string; count: string }>(
      `select user_id,
              coalesce(sum(compressed_size) filter (where status in ('pending', 'completed')), 0) as bytes,
              count(*) filter (where status in ('pending', 'completed')) as count
         from backups group by user_id`,
    )
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) {
      expect(Number(row.bytes), row.user_id).toBeLessThanOrEqual(backupQuota.maxTotalBytes)
      expect(Number(row.count), row.user_id).toBeLessThanOrEqual(backupQuota.maxBackups)
    }
  })

  it('keeps no object of a failed upload', async () => {
    const failedKeys = await query<{ s3_key: string }>(`select s3_key from backups where status = 'failed'`)
    expect(failedKeys.length, 'the load produced rejected uploads').toBeGreaterThan(0)
    // The folder is read where the store writes: every completed backup's object is there.
    const completed = await query<{ s3_key: string }>(`select s3_key from backups where status = 'completed'`)
    expect(completed.length).toBeGreaterThan(0)
    expect(completed.map((row) => row.s3_key).filter((key) => !existsSync(objectFile(key)))).toEqual([])
    const kept = failedKeys.map((row) => row.s3_key).filter((key) => existsSync(objectFile(key)))
    expect(kept, `${kept.length} of ${failedKeys.length} failed uploads still have their object`).toEqual([])
  })

  it('leaves no upload pending once its grace period has passed', async () => {
    const pending = await query<{ s3_key: string }>(`select s3_key from backups where status = 'pending'`)
    expect(pending.length, 'the load left abandoned uploads').toBeGreaterThan(0)
    // The release runs on a timer; here it is run directly, on a clock past the upload window and its grace.
    const released = await releaseAsIfLater(pendingLapsesAfter + 60_000)
    timings.releaseMs = released.ms
    expect(released.result).toEqual({ ran: true, released: pending.length })
    const left = await query<{ id: string }>(`select id from backups where status = 'pending'`)
    expect(left).toEqual([])
    // Released, they are failed now: their objects are held to the same rule as every failed upload.
    const kept = pending.map((row) => row.s3_key).filter((key) => existsSync(objectFile(key)))
    expect(kept, 'objects of released uploads').toEqual([])
  })

  // --- helpers ---

  function redisTarget() {
    const url = new URL(testRedisUrl)
    return { host: url.hostname, port: Number(url.port || 6379) }
  }

  function objectFile(key: string): string {
    return objectPath(dataDir, BUCKET, key)
  }

  async function query<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      return (await client.query<T>(text)).rows
    } finally {
      await client.end()
    }
  }

  /**
   * Runs the hourly release job once, in this process, on a clock `aheadMs` in the future: the job the
   * instances run on a timer, forced now (not only if due) instead of waiting for the timer.
   */
  async function releaseAsIfLater(aheadMs: number) {
    const started = performance.now()
    const config = loadConfig({
      CLOUD_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      CLOUD_PUBLIC_URL: defined(balancer).url,
    })
    const database = await openDatabase(config)
    const clock = { now: () => new Date(Date.now() + aheadMs) }
    const services = createCloudServices({ config, database, clock })
    try {
      const log = { info() {} }
      const result = await releaseLapsedBackups({ db: database.db, store: services.storage.store, clock, log })
      return { result, ms: Math.round(performance.now() - started) }
    } finally {
      services.storage.store.close()
      await services.close()
      await database.close()
    }
  }

  function isError(o: Outcome): boolean {
    return o.status === 0 || o.status >= 500
  }

  function explained(o: Outcome): boolean {
    return faults.some((fault) => {
      const near = o.at >= fault.at - 1000 && o.at <= fault.at + FAULT_WINDOW_MS
      switch (fault.kind) {
        case 'pg-cut':
          return near
        case 'kill':
          // In flight on the killed instance, or refused by it until the balancer dropped it.
          return o.backend === fault.instance ? o.at >= fault.at - 1000 : near && o.backend === undefined
        case 'redis-cut':
          return near && (o.backend === fault.instance || o.backend === undefined)
        case 'redis-restore':
          return false
        default:
          return fault.kind satisfies never
      }
    })
  }

  function show(o: Outcome): string {
    return `t=${o.at} relay ${o.relay} ${o.step} via ${o.backend ?? '?'}: ${o.status} ${o.code ?? ''} ${o.error ?? ''}`.trim()
  }

  function showProbe(p: Probe): string {
    return `${p.status} ${p.body}`
  }

  function summary(): string {
    const counts = new Map<string, number>()
    for (const o of outcomes) {
      const key = `${o.step} ${o.status}`
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
    const upstream = (balancer?.routed ?? []).filter((r) => r.status === 0 || r.status >= 500)
    return [
      `balancer saw ${upstream.length} failed upstream requests: ${upstream
        .map((r) => `t=${r.at} ${r.backend} ${r.method} ${r.path} ${r.status} ${r.error ?? ''}`)
        .join('; ')}`,
      `faults: ${faults.map((f) => `${f.kind}@${f.at}${f.instance ? `(${f.instance})` : ''}${f.detail ? ` ${f.detail}` : ''}`).join(', ')}`,
      `outcomes: ${[...counts].map(([k, n]) => `${k}×${n}`).join(', ')}`,
    ].join('\n')
  }
})
