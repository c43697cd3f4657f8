import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MINUTE, SECOND, type SourceHealthSettings } from '@relay/contracts'
import { type Clock, migrateToLatest } from '@relay/server-kit'
import Fastify from 'fastify'
import { openDatabase, type RelayDatabase } from '../apps/relay/src/db/database.ts'
import { migrations } from '../apps/relay/src/db/migrations/index.ts'
import { createHealthHistory, type HealthHistory } from '../apps/relay/src/health-history/recorder.ts'
import { createHealthBoard } from '../apps/relay/src/health-states/board.ts'
import type { Outcome } from '../apps/relay/src/health-states/machine.ts'
import { defaultHealthSettings } from '../apps/relay/src/health-states/settings.ts'
import type { Reading } from '../apps/relay/src/sources/drivers/types.ts'
import type { Benchmark, Figure } from './lib/benchmark.ts'
import { range, roundedParts } from './lib/compare.ts'
import { startMemorySampler } from './lib/memory.ts'
import { median } from './lib/throughput.ts'

const collectors = 100
const sensorsPerCollector = 5
const pollEvery = 5 * SECOND
const pollsPerMinute = MINUTE / pollEvery
/** One collector in ten flaps: one poll in a hundred fails, so its state changes are recorded too. */
const flappingEvery = 10
const failEvery = 100
const retentionDays = 7
/** Simulated minutes per timed round of the write-cost figure: 6 hours, 432 000 polls. */
const roundMinutes = 6 * 60
const rounds = 3
const historyTables = ['history_series', 'health_minutes', 'sensor_minutes', 'health_transitions'] as const

type Loop = { polls: number; ms: number; flushMs: number; flushes: number }

/** A clock the loop moves itself: each simulated poll is 5 s after the one before. */
function manualClock(start: number): Clock & { set(at: number): void } {
  let now = start
  return { now: () => new Date(now), set: (at) => (now = at) }
}

async function openTempDatabase(): Promise<RelayDatabase & { remove(): Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-bench-history-'))
  const database = openDatabase(dir)
  await migrateToLatest(database.db, migrations)
  return Object.assign(database, {
    async remove() {
      await database.close()
      rmSync(dir, { recursive: true, force: true })
    },
  })
}

/**
 * The runtime's poll loop reduced to what follows a fetch: the health board takes each outcome, and
 * with a history the board's changes and the outcome (latency, 5 sensor readings) go to it, flushed
 * once a simulated minute, as the relay's timer does. Without one, the same loop with nothing recorded.
 */
async function pollLoop(
  minutes: number,
  startMinute: number,
  history?: HealthHistory & { clock: Clock & { set(at: number): void } },
) {
  const clock = history?.clock ?? manualClock(0)
  const board = createHealthBoard({ clock, onChange: history?.changed })
  const settings: SourceHealthSettings = defaultHealthSettings
  const keys = Array.from(
    { length: collectors },
    (_, i) => `collector:00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  )
  const readings: Reading[][] = keys.map(() =>
    Array.from({ length: sensorsPerCollector }, (_, s) => ({
      externalId: `s${s}`,
      name: `s${s}`,
      unit: null,
      value: 0,
    })),
  )
  const ok: Outcome = { ok: true }
  const failed: Outcome = { ok: false, error: 'connect ECONNREFUSED 127.0.0.1:8080' }
  const result: Loop = { polls: 0, ms: 0, flushMs: 0, flushes: 0 }
  const started = performance.now()
  for (let minute = startMinute; minute < startMinute + minutes; minute++) {
    for (let tick = 0; tick < pollsPerMinute; tick++) {
      clock.set(minute * MINUTE + tick * pollEvery)
      for (let c = 0; c < collectors; c++) {
        const poll = minute * pollsPerMinute + tick
        const outcome = c % flappingEvery === 0 && poll % failEvery === c ? failed : ok
        const key = keys[c] as string
        board.record(key, outcome, settings)
        if (history) {
          const sensors = readings[c] as Reading[]
          for (let s = 0; s < sensors.length; s++) {
            ;(sensors[s] as Reading).value = 20 + ((poll + s) % 17) / 4
          }
          history.outcome(key, outcome, { latencyMs: 3 + (poll % 7), readings: sensors })
        }
        result.polls++
      }
    }
    if (history) {
      const flushStarted = performance.now()
      await history.flush()
      result.flushMs += performance.now() - flushStarted
      result.flushes++
    }
  }
  result.ms = performance.now() - started
  return result
}

function recorderOn(database: RelayDatabase, startMinute: number) {
  const clock = manualClock(startMinute * MINUTE)
  const log = Fastify({ logger: false }).log
  return Object.assign(createHealthHistory({ db: database.db, clock, log, retentionDays: async () => retentionDays }), {
    clock,
  })
}

const perPollUs = (loop: Loop) => (loop.ms * 1000) / loop.polls

async function measureWriteCost(): Promise<Figure> {
  const database = await openTempDatabase()
  const sampler = startMemorySampler()
  const ours: Loop[] = []
  const ceiling: Loop[] = []
  let peakRssMb = 0
  try {
    // Warm-up, discarded: the series rows are created and the code paths compiled.
    const startMinute = Math.floor(Date.UTC(2026, 0, 1) / MINUTE)
    await pollLoop(10, startMinute, recorderOn(database, startMinute))
    await pollLoop(10, startMinute)
    for (let round = 0; round < rounds; round++) {
      const first = startMinute + 10 + round * roundMinutes
      const order = round % 2 === 0 ? ['ceiling', 'ours'] : ['ours', 'ceiling']
      for (const side of order) {
        const loop =
          side === 'ours'
            ? await pollLoop(roundMinutes, first, recorderOn(database, first))
            : await pollLoop(roundMinutes, first)
        ;(side === 'ours' ? ours : ceiling).push(loop)
        console.error(`  history write round ${round + 1}/${rounds} ${side}: ${perPollUs(loop).toFixed(2)} µs per poll`)
      }
    }
  } finally {
    peakRssMb = sampler.stop()
    await database.remove()
  }
  const oursUs = median(ours.map(perPollUs))
  const middle = ours.find((loop) => perPollUs(loop) === oursUs) as Loop
  const [memory, flush] = roundedParts(
    [((middle.ms - middle.flushMs) * 1000) / middle.polls, (middle.flushMs * 1000) / middle.polls],
    2,
  )
  const rowsPerFlush = collectors * (1 + sensorsPerCollector)
  return {
    figure: `health history write cost per poll (${collectors} collectors at 5 s, ${sensorsPerCollector} sensors each)`,
    ours: oursUs,
    reference: median(ceiling.map(perPollUs)),
    comparedWith: { kind: 'ceiling', name: 'the same poll loop without history (health board only)' },
    unit: 'µs',
    peakRssMb,
    notes:
      `median of ${rounds} alternating rounds of ${roundMinutes / 60} simulated hours (${middle.polls} polls) ` +
      `(ours ${range(ours.map(perPollUs))}, ceiling ${range(ceiling.map(perPollUs))}); ` +
      `the median round's ${perPollUs(middle).toFixed(2)} µs: ${memory} µs summing in memory + ${flush} µs for the ` +
      `flushes, one transaction of ${rowsPerFlush} upserted rows per simulated minute ` +
      `(${(middle.flushMs / middle.flushes).toFixed(1)} ms each)`,
  }
}

/** Bytes of each history table and its indexes, from SQLite's page statistics. */
function tableBytes(database: RelayDatabase): Record<string, number> {
  const pages = database.sqlite
    .prepare('SELECT name, tbl_name FROM sqlite_schema WHERE tbl_name IN (?, ?, ?, ?)')
    .all(...historyTables) as {
    name: string
    tbl_name: string
  }[]
  const sizes = database.sqlite.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name').all() as {
    name: string
    bytes: number
  }[]
  const bytesOf = new Map(sizes.map((row) => [row.name, row.bytes]))
  const byTable: Record<string, number> = {}
  for (const { name, tbl_name } of pages) {
    byTable[tbl_name] = (byTable[tbl_name] ?? 0) + (bytesOf.get(name) ?? 0)
  }
  return byTable
}

async function measureSize(): Promise<Figure[]> {
  const database = await openTempDatabase()
  const sampler = startMemorySampler()
  try {
    const days = retentionDays
    const startMinute = Math.floor(Date.UTC(2026, 0, 1) / MINUTE)
    const started = performance.now()
    const loop = await pollLoop(days * 24 * 60, startMinute, recorderOn(database, startMinute))
    const seconds = ((performance.now() - started) / 1000).toFixed(0)
    const bytes = tableBytes(database)
    const count = (table: string) =>
      (database.sqlite.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
    const total = Object.values(bytes).reduce((sum, value) => sum + value, 0)
    const peakRssMb = sampler.stop()
    const itemDays = collectors * days
    const described = historyTables.map((table) => `${table} ${bytes[table] ?? 0} B (${count(table)} rows)`).join(', ')
    const simulated = `${loop.polls} polls simulated in ${seconds} s`
    const budget = { kind: 'none', name: 'budget: 1 440 rows per item and 144 per sensor a day' } as const
    return [
      {
        figure: `health history size after ${days} days (${collectors} collectors at 5 s, ${sensorsPerCollector} sensors each)`,
        ours: total,
        reference: null,
        comparedWith: budget,
        unit: 'bytes',
        peakRssMb,
        notes: `tables with their indexes, from dbstat: ${described}; ${simulated}`,
      },
      {
        figure: 'health history bytes per item per day (its minute rows)',
        ours: (bytes.health_minutes ?? 0) / itemDays,
        reference: null,
        comparedWith: budget,
        unit: 'bytes',
        peakRssMb,
        notes: `health_minutes over ${collectors} items × ${days} days: 1 440 rows an item a day`,
      },
      {
        figure: `health history bytes per collector per day (with its ${sensorsPerCollector} sensors and state changes)`,
        ours: total / itemDays,
        reference: null,
        comparedWith: budget,
        unit: 'bytes',
        peakRssMb,
        notes: `every history table over ${collectors} collectors × ${days} days; one collector in ${flappingEvery} fails one poll in ${failEvery}`,
      },
    ]
  } finally {
    await database.remove()
  }
}

export const benchmark: Benchmark = {
  name: 'health-history',
  async run() {
    return [await measureWriteCost(), ...(await measureSize())]
  },
}
