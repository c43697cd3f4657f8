import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { type Collector, type Stream, sourceLimits } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import { createApp as createRelayApp, type RelayApp } from '../apps/relay/src/app.ts'
import { loadConfig as loadRelayConfig } from '../apps/relay/src/config.ts'
import { openDatabase } from '../apps/relay/src/db/database.ts'
import { type Benchmark, type BenchSettings, bareRoute, type Figure } from './lib/benchmark.ts'
import { compareWithReference, range } from './lib/compare.ts'
import { startMemorySampler } from './lib/memory.ts'
import { createQueryTimer, type QueryTimer, type TimedCall } from './lib/query-timer.ts'
import { seedCollectors, spreadLastSent } from './lib/seed-sources.ts'
import { createBareRoutes, listenLocal } from './lib/servers.ts'
import { median } from './lib/throughput.ts'

/** The relay's own dashboard rate limit would refuse a load test after 200 requests: lifted here. */
const unlimited = { capacity: 1_000_000, refillEvery: 1000 }

const seededCollectors = 10_000
const runningStreams = 1_000
/** The most targets one junction takes. */
const targetsPerJunction = 100
/** Long enough that no stream sends again during the rounds: each sends once when its junction starts. */
const quietRateMs = sourceLimits.sendRate.max

const runtimePairs = 100
const runtimeRateMs = 1_000
const runtimeSensors = 5
const settleMs = 3_000
const minimumCpuWindowSeconds = 5
const cpuRounds = 3

/** 10000 → "10 000", as the figure names read. */
function spaced(count: number): string {
  return count.toLocaleString('en-US').replaceAll(',', ' ')
}

function withNote(figures: Figure[], note: string): Figure[] {
  return figures.map((figure) => ({ ...figure, notes: `${figure.notes}; ${note}` }))
}

type TempRelay = { relay: RelayApp; dataDir: string; close(): Promise<void> }

/** A relay on a temp folder; with a query timer, every statement of its database is timed. */
async function createTempRelay(options: { clock?: Clock; queryTimer?: QueryTimer } = {}): Promise<TempRelay> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'relay-bench-data-'))
  const webDir = mkdtempSync(path.join(os.tmpdir(), 'relay-bench-web-'))
  const removeTempDirs = () => {
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(webDir, { recursive: true, force: true })
  }
  const opened = openDatabase(dataDir)
  try {
    const config = loadRelayConfig({ RELAY_DATA_DIR: dataDir, LOG_LEVEL: 'silent', RELAY_WEB_DIR: webDir })
    const database = options.queryTimer?.wrap(opened) ?? opened
    const relay = await createRelayApp(config, {
      database,
      dashboardRateLimit: unlimited,
      ...(options.clock ? { clock: options.clock } : {}),
    })
    return {
      relay,
      dataDir,
      async close() {
        // The app does not close a database it was given.
        await relay.close()
        await opened.close()
        removeTempDirs()
      },
    }
  } catch (err) {
    await opened.close()
    removeTempDirs()
    throw err
  }
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) {
      return value
    }
    if (performance.now() > deadline) {
      throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`)
    }
    await sleep(50)
  }
}

async function fetchBody(url: string): Promise<ArrayBuffer> {
  const response = await fetch(url)
  if (!response.ok) {
    throw new Error(`GET ${url} answered ${response.status}`)
  }
  return response.arrayBuffer()
}

function expectEqual(what: string, actual: unknown, expected: unknown): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`)
  }
}

/**
 * Where one request's time goes when nothing else runs: a request over HTTP (routing, schema
 * serialisation, the socket), then the service call alone, each with the SQL it ran timed inside the
 * same call, so every part is a part of the whole beside it. The two kinds alternate after a few
 * discarded calls; medians of `calls`.
 */
async function describeUnloaded(url: string, service: () => Promise<unknown>, timer: QueryTimer, calls = 30) {
  const bytes = (await fetchBody(url)).byteLength
  const overHttp = () => timer.time(() => fetchBody(url))
  const alone = () => timer.time(service)
  for (let i = 0; i < 3; i++) {
    await overHttp()
    await alone()
  }
  const samples = { http: [] as TimedCall[], service: [] as TimedCall[] }
  for (let i = 0; i < calls; i++) {
    samples.http.push(await overHttp())
    samples.service.push(await alone())
  }
  const ms = (value: number) => `${value.toFixed(1)} ms`
  const describe = (of: TimedCall[]) => {
    const statements = of.map((sample) => sample.sql.statements)
    const counted = Math.min(...statements) === Math.max(...statements) ? `${statements[0]}` : range(statements, 0)
    if (of.some((sample) => sample.sql.ms > sample.ms)) {
      throw new Error('the SQL of a call took longer than the call: the query timer is not timing that call')
    }
    const sql = median(of.map((sample) => sample.sql.ms))
    return `${ms(median(of.map((sample) => sample.ms)))}, ${ms(sql)} of it SQL (${counted} statement${counted === '1' ? '' : 's'})`
  }
  return (
    `reply ${(bytes / 1024).toFixed(0)} kB; one call alone, median of ${calls}: over HTTP ${describe(samples.http)}; ` +
    `the service call without HTTP ${describe(samples.service)}`
  )
}

async function measureStats(settings: BenchSettings): Promise<Figure[]> {
  // Held still, so the mix of healthy, slow and silent streams cannot drift between rounds.
  const frozenNow = new Date()
  const clock: Clock = { now: () => frozenNow }
  const bare = createBareRoutes()
  const queryTimer = createQueryTimer()
  let temp: TempRelay | undefined
  try {
    temp = await createTempRelay({ clock, queryTimer })
    const { relay, dataDir } = temp
    const seedStarted = performance.now()
    // After createApp, which migrated the database; before listen, whose resume must find nothing to start.
    const seeded = await seedCollectors(dataDir, { count: seededCollectors, now: frozenNow })
    console.error(
      `  seeded ${spaced(seededCollectors)} collectors in ${Math.round(performance.now() - seedStarted)} ms`,
    )
    const base = await listenLocal(relay)
    const bareUrl = `${await listenLocal(bare)}/bare`
    const { sources, runtime, virtualStreams } = relay.services

    const setupStarted = performance.now()
    const feeder = await sources.createCollector({
      name: 'Stream feeder',
      collectorType: 'Virtual',
      pollRateMs: sourceLimits.pollRate.max,
      settings: { sensorCount: 5 },
    })
    const streams: Stream[] = []
    for (let i = 1; i <= runningStreams; i++) {
      const screen = i % 4 === 0 ? {} : { deviceName: `Lobby display ${i}`, screenId: `screen-${i}` }
      streams.push(await sources.createStream({ name: `Screen ${i}`, type: 'Virtual', ...screen }))
    }
    for (let first = 0; first < streams.length; first += targetsPerJunction) {
      const targets = streams.slice(first, first + targetsPerJunction)
      const junction = await sources.createJunction({
        name: `Displays ${first + 1}–${first + targets.length}`,
        collectorIds: [feeder.id],
        targets: targets.map((stream) => ({ streamId: stream.id, sendRateMs: quietRateMs })),
      })
      await sources.startJunction(junction.id)
    }
    await until('every stream to send once and the feeder to fetch', 60_000, async () => {
      const sent = (await sources.listStreams()).every((stream) => stream.lastSentTime !== null)
      const fetched = (await sources.getCollector(feeder.id)).lastFetchTime !== null
      return sent && fetched && virtualStreams.size === runningStreams ? true : undefined
    })
    const setupMs = Math.round(performance.now() - setupStarted)
    console.error(`  started ${spaced(runningStreams)} Virtual streams in ${setupMs} ms`)
    const silence = await spreadLastSent(
      dataDir,
      streams.map((stream) => stream.id),
      frozenNow,
    )

    const collectorStats = await sources.collectorStats()
    expectEqual('collector stats', collectorStats.collectors, {
      ...collectorStats.collectors,
      active: 1,
      total: seeded.counted + 1,
      breakdown: {
        ...collectorStats.collectors.breakdown,
        locked: seeded.locked,
        failedFetch: seeded.failedFetch,
        neverFetched: seeded.neverFetched,
      },
    })
    const streamStats = await sources.streamStats()
    expectEqual(
      'stream stats',
      { active: streamStats.active, errors: streamStats.breakdown.errors, warnings: streamStats.breakdown.warnings },
      { active: runningStreams, errors: silence.silent, warnings: silence.slow },
    )
    expectEqual('running streams', runtime.runningStreamIds().length, runningStreams)

    const collectorsUnloaded = await describeUnloaded(
      `${base}/api/collectors/stats`,
      () => sources.collectorStats(),
      queryTimer,
    )
    const streamsUnloaded = await describeUnloaded(
      `${base}/api/connections/streams/stats`,
      () => sources.streamStats(),
      queryTimer,
    )
    console.error(`  collectors stats: ${collectorsUnloaded}`)
    console.error(`  streams stats: ${streamsUnloaded}`)

    const collectorsName = `${spaced(seededCollectors)} collectors`
    const collectors = await compareWithReference(
      {
        label: 'collectors stats',
        figures: {
          throughput: `collectors stats req/s (${collectorsName})`,
          medianLatency: `collectors stats p50 latency (${collectorsName})`,
          latency: `collectors stats p99 latency (${collectorsName})`,
        },
        ours: `${base}/api/collectors/stats`,
        reference: bareUrl,
        comparedWith: bareRoute,
      },
      settings,
    )
    const { breakdown } = collectorStats.collectors
    const collectorsNote =
      `${spaced(collectorStats.collectors.total)} counted (EventEngine left out), ${breakdown.locked} locked, ` +
      `${breakdown.failedFetch} failed fetch, ${breakdown.neverFetched} never fetched, ` +
      `${collectorStats.sensors.details.length} with lost sensors: ` +
      `${collectorStats.collectors.details.length + collectorStats.sensors.details.length} issues listed; ${collectorsUnloaded}`

    const streamsName = `${spaced(runningStreams)} running streams`
    const streamFigures = await compareWithReference(
      {
        label: 'streams stats',
        figures: {
          throughput: `streams stats req/s (${streamsName})`,
          medianLatency: `streams stats p50 latency (${streamsName})`,
          latency: `streams stats p99 latency (${streamsName})`,
        },
        ours: `${base}/api/connections/streams/stats`,
        reference: bareUrl,
        comparedWith: bareRoute,
      },
      settings,
    )
    const streamsNote =
      `Virtual streams in ${runningStreams / targetsPerJunction} running junctions, send rate ${quietRateMs / 1000} s: ` +
      `${silence.healthy} healthy, ${silence.slow} slow, ${silence.silent} silent; ${streamsUnloaded}`
    return [...withNote(collectors, collectorsNote), ...withNote(streamFigures, streamsNote)]
  } finally {
    await temp?.close()
    await bare.close()
  }
}

type Snapshot = { sentAt: Map<string, string | null>; fetchedAt: Map<string, string | null>; sends: number }

type RuntimeBench = {
  relay: RelayApp
  collectors: Collector[]
  streams: Stream[]
  junctionIds: string[]
  sends(): number
}

async function createRuntimeBench(relay: RelayApp): Promise<RuntimeBench> {
  const { sources, virtualStreams } = relay.services
  const collectors: Collector[] = []
  const streams: Stream[] = []
  const junctionIds: string[] = []
  for (let i = 1; i <= runtimePairs; i++) {
    const collector = await sources.createCollector({
      name: `Virtual ${i}`,
      collectorType: 'Virtual',
      pollRateMs: runtimeRateMs,
      settings: { sensorCount: runtimeSensors },
    })
    const stream = await sources.createStream({ name: `Screen ${i}`, type: 'Virtual', deviceName: `Display ${i}` })
    const junction = await sources.createJunction({
      name: `Junction ${i}`,
      collectorIds: [collector.id],
      targets: [{ streamId: stream.id, sendRateMs: runtimeRateMs }],
    })
    collectors.push(collector)
    streams.push(stream)
    junctionIds.push(junction.id)
  }
  // Counts what Virtual streams hand to the relay, on the map the relay keeps their last payloads in.
  let sends = 0
  const set = virtualStreams.set.bind(virtualStreams)
  virtualStreams.set = (streamId, payload) => {
    sends++
    return set(streamId, payload)
  }
  return { relay, collectors, streams, junctionIds, sends: () => sends }
}

async function snapshot(bench: RuntimeBench): Promise<Snapshot> {
  const { sources } = bench.relay.services
  return {
    sentAt: new Map((await sources.listStreams()).map((stream) => [stream.id, stream.lastSentTime])),
    fetchedAt: new Map((await sources.listCollectors()).map((collector) => [collector.id, collector.lastFetchTime])),
    sends: bench.sends(),
  }
}

const advanced = (before: string | null | undefined, after: string | null | undefined) =>
  after != null && (before == null || Date.parse(after) > Date.parse(before))

/** Throws unless every stream sent and every collector fetched during the window, recently at its end. */
async function checkRunning(bench: RuntimeBench, before: Snapshot, after: Snapshot, seconds: number, end: number) {
  const { runtime, virtualStreams, sources } = bench.relay.services
  const problems: string[] = []
  const recent = (time: string | null | undefined) => time != null && end - Date.parse(time) < 2 * runtimeRateMs + 500
  const stale = bench.streams.filter(
    (stream) =>
      !advanced(before.sentAt.get(stream.id), after.sentAt.get(stream.id)) || !recent(after.sentAt.get(stream.id)),
  )
  if (stale.length > 0) {
    problems.push(`${stale.length} streams did not keep sending (lastSentTime)`)
  }
  const idle = bench.collectors.filter(
    (c) => !advanced(before.fetchedAt.get(c.id), after.fetchedAt.get(c.id)) || !recent(after.fetchedAt.get(c.id)),
  )
  if (idle.length > 0) {
    problems.push(`${idle.length} collectors did not keep fetching (lastFetchTime)`)
  }
  const failed = (await sources.listCollectors()).filter((collector) => !collector.lastFetchSuccessful)
  if (failed.length > 0) {
    problems.push(`${failed.length} collectors failed their last fetch: ${failed[0]?.lastFetchErrorMessage}`)
  }
  const wrongPayloads = bench.streams.filter((stream, i) => {
    const payload = virtualStreams.get(stream.id)
    const collectorId = bench.collectors[i]?.id
    return payload?.sensors.length !== runtimeSensors || payload.sensors.some((s) => s.collectorId !== collectorId)
  })
  if (wrongPayloads.length > 0) {
    problems.push(`${wrongPayloads.length} streams hold no payload of ${runtimeSensors} sensors from their collector`)
  }
  const sends = after.sends - before.sends
  const expected = runtimePairs * seconds * (1000 / runtimeRateMs)
  if (sends < expected * 0.8) {
    problems.push(`${sends} payloads sent in ${seconds.toFixed(1)} s, expected about ${Math.round(expected)}`)
  }
  if (runtime.pollingHealth().active !== runtimePairs || runtime.runningStreamIds().length !== runtimePairs) {
    problems.push(`${runtime.pollingHealth().active} pollers and ${runtime.runningStreamIds().length} senders running`)
  }
  if (problems.length > 0) {
    throw new Error(`the runtime did not run as configured: ${problems.join('; ')}`)
  }
  return sends
}

function checkIdle(bench: RuntimeBench, before: Snapshot, after: Snapshot) {
  const { runtime } = bench.relay.services
  const moved = bench.streams.filter((stream) => before.sentAt.get(stream.id) !== after.sentAt.get(stream.id))
  const polled = bench.collectors.filter((c) => before.fetchedAt.get(c.id) !== after.fetchedAt.get(c.id))
  if (runtime.pollingHealth().active > 0 || after.sends !== before.sends || moved.length > 0 || polled.length > 0) {
    throw new Error(
      `the stopped relay still ran: ${runtime.pollingHealth().active} pollers, ${after.sends - before.sends} sends, ` +
        `${moved.length} streams and ${polled.length} collectors updated`,
    )
  }
}

type CpuSample = { percent: number; seconds: number; sends: number }

/** CPU time of this whole process (every thread) over a wall-clock window, as a percent of one core. */
async function measureCpu(bench: RuntimeBench, running: boolean, seconds: number): Promise<CpuSample> {
  const { sources } = bench.relay.services
  for (const id of bench.junctionIds) {
    await (running ? sources.startJunction(id) : sources.stopJunction(id))
  }
  await sleep(settleMs)
  const before = await snapshot(bench)
  const startCpu = process.cpuUsage()
  const started = performance.now()
  await sleep(seconds * 1000)
  const cpu = process.cpuUsage(startCpu)
  const wallMs = performance.now() - started
  const end = Date.now()
  const after = await snapshot(bench)
  const elapsed = wallMs / 1000
  const sends = running ? await checkRunning(bench, before, after, elapsed, end) : 0
  if (!running) {
    checkIdle(bench, before, after)
  }
  return { percent: ((cpu.user + cpu.system) / 1000 / wallMs) * 100, seconds: elapsed, sends }
}

async function measureRuntimeCpu(settings: BenchSettings): Promise<Figure[]> {
  const seconds = Math.max(settings.durationSeconds, minimumCpuWindowSeconds)
  const temp = await createTempRelay()
  try {
    // Runs the startup resume, as listen would; nothing needs a port here.
    await temp.relay.ready()
    const bench = await createRuntimeBench(temp.relay)
    const sampler = startMemorySampler()
    const runs = { ours: [] as CpuSample[], idle: [] as CpuSample[] }
    let peakRssMb = 0
    try {
      for (let round = 0; round < cpuRounds; round++) {
        const order = round % 2 === 0 ? (['idle', 'ours'] as const) : (['ours', 'idle'] as const)
        for (const side of order) {
          const sample = await measureCpu(bench, side === 'ours', seconds)
          runs[side].push(sample)
          const sent = side === 'ours' ? `, ${sample.sends} payloads sent` : ''
          console.error(`  runtime CPU round ${round + 1}/${cpuRounds} ${side}: ${sample.percent.toFixed(2)} %${sent}`)
        }
      }
    } finally {
      peakRssMb = sampler.stop()
      for (const id of bench.junctionIds) {
        await temp.relay.services.sources.stopJunction(id)
      }
    }
    const percents = (side: CpuSample[]) => side.map((sample) => sample.percent)
    const sendRate = median(runs.ours.map((sample) => sample.sends / sample.seconds))
    return [
      {
        figure: `runtime CPU % of one core (${runtimePairs} collectors + ${runtimePairs} streams at ${runtimeRateMs / 1000} s)`,
        ours: median(percents(runs.ours)),
        reference: median(percents(runs.idle)),
        comparedWith: {
          kind: 'peer',
          name: `the same relay with its ${runtimePairs} junctions stopped (its idle CPU)`,
        },
        unit: '% CPU',
        peakRssMb,
        notes:
          `process.cpuUsage over ${seconds} s after ${settleMs / 1000} s settling, median of ${cpuRounds} alternating ` +
          `rounds (ours ${range(percents(runs.ours))}, peer ${range(percents(runs.idle))}); ` +
          `Virtual collectors of ${runtimeSensors} sensors, one per junction to ` +
          `one Virtual stream; ${sendRate.toFixed(0)} payloads/s sent, every stream and collector checked to advance`,
      },
    ]
  } finally {
    await temp.close()
  }
}

export const benchmark: Benchmark = {
  name: 'dashboard',
  async run(settings) {
    const stats = await measureStats(settings)
    const cpu = await measureRuntimeCpu(settings)
    return [...stats, ...cpu]
  },
}
