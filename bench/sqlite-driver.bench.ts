import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { MB } from '@relay/contracts'
import type { Benchmark, Figure, Reference } from './lib/benchmark.ts'
import { range } from './lib/compare.ts'
import { seedReadings } from './lib/seed-readings.ts'
import { seedCollectors } from './lib/seed-sources.ts'
import {
  aggregateCalls,
  collectorHealthCalls,
  type DriverChildResult,
  type DriverName,
  insertTransactions,
  pointReads,
  readingsPerTransaction,
  type TimedFigure,
} from './lib/sqlite-driver-child.ts'
import { median } from './lib/throughput.ts'

const run = promisify(execFile)
const databaseBytes = 50 * MB
const collectorCount = 10_000
const rounds = 5
const childFile = path.join(import.meta.dirname, 'lib', 'sqlite-driver-child.ts')
const ours: DriverName = 'better-sqlite3'
const peer: DriverName = 'node:sqlite'

type Measured = { child: DriverChildResult; warnings: string[] }

/** One driver's workloads on a fresh copy of the fixture, in a process of its own. */
async function measure(driver: DriverName, fixture: string, roundDir: string): Promise<Measured> {
  const dir = path.join(roundDir, driver.replace(/\W/g, '-'))
  mkdirSync(dir, { recursive: true })
  const file = path.join(dir, 'relay.db')
  copyFileSync(fixture, file)
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', childFile, driver, file, dir],
      { maxBuffer: 16 * 1024 * 1024 },
    )
    const warnings = stderr
      .split('\n')
      .filter((line) => line.includes('Warning'))
      .map((line) => line.replace(/^\(node:\d+\) /, ''))
    return { child: JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as DriverChildResult, warnings }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The relay's SQLite driver, better-sqlite3 (a native addon, through Kysely's SqliteDialect), beside
 * Node's built-in node:sqlite on the relay's workloads: readings written in transactions, point reads,
 * the dashboard's collector statistics through Kysely, a sensor-history aggregate, the VACUUM INTO
 * snapshot that backups take and the online backup API; each driver in a child process of its own.
 */
export const benchmark: Benchmark = {
  name: 'sqlite-driver',
  async run() {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-bench-sqlite-driver-'))
    try {
      const fixtureDir = path.join(dir, 'fixture')
      const now = new Date('2026-11-01T00:00:00.000Z')
      const { rows } = await seedReadings(fixtureDir, { targetBytes: databaseBytes, now })
      const collectors = await seedCollectors(fixtureDir, { count: collectorCount, now })
      const fixture = path.join(fixtureDir, 'relay.db')

      const samples: Record<DriverName, Measured[]> = { [ours]: [], [peer]: [] }
      for (let round = 0; round < rounds; round++) {
        // peer-ours, ours-peer, …: drift on the machine falls on both sides.
        const order = round % 2 === 0 ? [peer, ours] : [ours, peer]
        for (const driver of order) {
          console.error(`  sqlite-driver: round ${round + 1}, ${driver}`)
          samples[driver].push(await measure(driver, fixture, path.join(dir, `round-${round}`)))
        }
      }
      return figuresOf(samples, { rows, collectors: collectors.stored })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  },
}

function figuresOf(samples: Record<DriverName, Measured[]>, seeded: { rows: number; collectors: number }): Figure[] {
  const children = (driver: DriverName) => samples[driver].map((sample) => sample.child)
  const first = (driver: DriverName) => children(driver)[0] as DriverChildResult
  const betterVersion = (
    JSON.parse(readFileSync(createRequire(import.meta.url).resolve('better-sqlite3/package.json'), 'utf8')) as {
      version: string
    }
  ).version
  const warnings = [...new Set(samples[peer].flatMap((sample) => sample.warnings))]
  const reference: Reference = { kind: 'peer', name: `node:sqlite of Node ${process.version}` }
  const peakRssMb = Math.max(...[ours, peer].flatMap((driver) => children(driver).map((child) => child.peakRssMb)))
  const snapshotMb = (first(ours).snapshotBytes / MB).toFixed(1)
  const setting =
    `better-sqlite3 ${betterVersion} on SQLite ${first(ours).sqliteVersion}, node:sqlite on SQLite ` +
    `${first(peer).sqliteVersion}; node:sqlite ${warnings.length > 0 ? `warns "${warnings.join('; ')}"` : 'prints no warning'}; ` +
    `the relay's pragmas (WAL, synchronous NORMAL) and both with its 16 MB page cache; each driver in a child process of its own on a fresh copy of a ` +
    `${databaseBytes / MB} MB relay database (${seeded.rows.toLocaleString('en')} readings, ` +
    `${seeded.collectors.toLocaleString('en')} collectors); peak RSS MB: the larger of the two children's`

  // Timed figures are read on CPU time: on a machine shared with other work the clock also counts the
  // time a child waited for a core, which swings far more between rounds than the work does.
  const figure = (key: TimedFigure | 'peakRssMb', name: string, unit: string, what: string, decimals = 2): Figure => {
    const of = (driver: DriverName) =>
      children(driver).map((child) => (key === 'peakRssMb' ? child.peakRssMb : child.onCpu[key]))
    const sides = { ours: of(ours), peer: of(peer) }
    const wall =
      key === 'peakRssMb'
        ? ''
        : `; on the clock ours ${range(
            children(ours).map((child) => child[key]),
            decimals,
          )}, peer ${range(
            children(peer).map((child) => child[key]),
            decimals,
          )}`
    return {
      figure: name,
      ours: median(sides.ours),
      reference: median(sides.peer),
      comparedWith: reference,
      unit,
      peakRssMb,
      notes:
        `${what}; median of ${rounds} alternating rounds (ours ${range(sides.ours, decimals)}, ` +
        `peer ${range(sides.peer, decimals)})${wall}; ${setting}`,
    }
  }
  return [
    figure(
      'insertRowsPerSecond',
      `readings insert rows per CPU second (transactions of ${readingsPerTransaction})`,
      'rows/s',
      `${insertTransactions} transactions of one reading per sensor, one prepared insert`,
      0,
    ),
    figure(
      'pointReadsPerSecond',
      'point reads by id per CPU second',
      'reads/s',
      `${pointReads.toLocaleString('en')} random ids`,
      0,
    ),
    figure(
      'collectorHealthMs',
      `collector statistics query CPU time (${collectorCount.toLocaleString('en')} collectors, Kysely)`,
      'ms',
      `findCollectorHealth (2 statements) through Kysely's SqliteDialect, statements cached as the relay does; median of ${collectorHealthCalls} calls`,
      2,
    ),
    figure(
      'readingsAggregateMs',
      'readings aggregate CPU time (last hour per sensor)',
      'ms',
      `count, avg, min, max grouped by sensor over a full scan; median of ${aggregateCalls} calls`,
      2,
    ),
    figure(
      'vacuumIntoMs',
      `VACUUM INTO snapshot CPU time (${snapshotMb} MB)`,
      'ms',
      'the statement the backup snapshot runs',
      0,
    ),
    figure(
      'backupApiMs',
      `online backup API CPU time (${snapshotMb} MB)`,
      'ms',
      'better-sqlite3 db.backup() beside node:sqlite backup(), both stepping 100 pages at a time',
      0,
    ),
    figure(
      'peakRssMb',
      'workload process peak RSS',
      'MB',
      `the child's maxRSS over every workload above (ours at rest ${range(
        children(ours).map((child) => child.baselineRssMb),
        1,
      )} MB, peer ${range(
        children(peer).map((child) => child.baselineRssMb),
        1,
      )} MB once loaded and open)`,
      1,
    ),
  ]
}
