// Runs the relay's SQLite workloads on one driver, in a process of its own so its peak RSS is that
// driver's alone, and prints the figures as one JSON line. Arguments: `better-sqlite3` or `node:sqlite`,
// the database file to work on (a copy, written to), and a folder for the snapshots.
import { statSync } from 'node:fs'
import path from 'node:path'
import { Kysely, type SqliteDatabase, SqliteDialect } from 'kysely'
import type { RelayDB } from '../../apps/relay/src/db/schema.ts'
import { findCollectorHealth } from '../../apps/relay/src/sources/repo.ts'
import { median } from './throughput.ts'

export const driverNames = ['better-sqlite3', 'node:sqlite'] as const
export type DriverName = (typeof driverNames)[number]

export type DriverChildResult = {
  driver: DriverName
  sqliteVersion: string
  /** Readings inserted per second, in transactions of one poll of every sensor. */
  insertRowsPerSecond: number
  /** `select … where id = ?` per second, random ids. */
  pointReadsPerSecond: number
  /** The relay's collector health statistics through Kysely (2 statements), median of the calls. */
  collectorHealthMs: number
  /** Count, mean, min and max per sensor over the last hour of readings, median of the calls. */
  readingsAggregateMs: number
  vacuumIntoMs: number
  /** The driver's online backup API to a new file. */
  backupApiMs: number
  snapshotBytes: number
  /** RSS once the driver is loaded and the database open, before any work. */
  baselineRssMb: number
  /** The process's maximum resident set size since it started (VmHWM). */
  peakRssMb: number
  /**
   * The same figures on the process's CPU time (user + system) rather than the clock's: what the work
   * costs, less swayed by other processes on a shared machine.
   */
  onCpu: Record<TimedFigure, number>
}

export type TimedFigure =
  | 'insertRowsPerSecond'
  | 'pointReadsPerSecond'
  | 'collectorHealthMs'
  | 'readingsAggregateMs'
  | 'vacuumIntoMs'
  | 'backupApiMs'

/** One reading per sensor and poll: the rows one transaction of the collectors' writes holds. */
export const readingsPerTransaction = 240
export const insertTransactions = 1000
export const pointReads = 100_000
export const collectorHealthCalls = 30
export const aggregateCalls = 10

type Parameter = string | number | null
type Statement = {
  run(...parameters: Parameter[]): unknown
  get(...parameters: Parameter[]): unknown
  all(...parameters: Parameter[]): unknown[]
}

/** The calls every workload makes, the same SQL on both drivers. */
type Connection = {
  exec(sql: string): void
  prepare(sql: string): Statement
  /** What Kysely's SqliteDialect is given. */
  kysely: SqliteDatabase
  backup(targetFile: string): Promise<unknown>
  close(): void
}

async function connect(driver: DriverName, file: string): Promise<Connection> {
  if (driver === 'better-sqlite3') {
    const { default: SQLite } = await import('better-sqlite3')
    const db = new SQLite(file)
    return {
      exec: (sql) => db.exec(sql),
      prepare: (sql) => db.prepare<Parameter[]>(sql),
      kysely: db,
      backup: (targetFile) => db.backup(targetFile),
      close: () => db.close(),
    }
  }
  const sqlite = await import('node:sqlite')
  const db = new sqlite.DatabaseSync(file)
  return {
    exec: (sql) => db.exec(sql),
    prepare: (sql) => db.prepare(sql),
    kysely: kyselyView(db),
    backup: (targetFile) => sqlite.backup(db, targetFile),
    close: () => db.close(),
  }
}

/**
 * node:sqlite as Kysely's SqliteDialect expects a database: all Kysely needs beyond the driver itself.
 * Statements take their parameters spread rather than as an array, and say whether they return rows
 * through their columns rather than `reader`.
 */
function kyselyView(db: import('node:sqlite').DatabaseSync): SqliteDatabase {
  return {
    close: () => db.close(),
    prepare(sql) {
      const statement = db.prepare(sql)
      type Parameters = Parameter[]
      return {
        reader: statement.columns().length > 0,
        all: (parameters) => statement.all(...(parameters as Parameters)),
        run: (parameters) => statement.run(...(parameters as Parameters)),
        iterate: (parameters) => statement.iterate(...(parameters as Parameters)),
      }
    },
  }
}

/**
 * Kysely prepares every query anew; the relay keeps its statements by SQL text (db/database.ts), and
 * so does this, on both drivers alike.
 */
function withStatementCache(database: SqliteDatabase): SqliteDatabase {
  const cache = new Map<string, ReturnType<SqliteDatabase['prepare']>>()
  return {
    close: () => database.close(),
    prepare(sql) {
      let statement = cache.get(sql)
      if (!statement) {
        statement = database.prepare(sql)
        cache.set(sql, statement)
      }
      return statement
    },
  }
}

function rssMb(): number {
  return process.memoryUsage.rss() / 1024 / 1024
}

type Took = { wallMs: number; cpuMs: number }

async function timed(work: () => unknown): Promise<Took> {
  const cpu = process.cpuUsage()
  const started = performance.now()
  await work()
  const wallMs = performance.now() - started
  const { user, system } = process.cpuUsage(cpu)
  return { wallMs, cpuMs: (user + system) / 1000 }
}

const medianOf = (took: Took[]): Took => ({
  wallMs: median(took.map((t) => t.wallMs)),
  cpuMs: median(took.map((t) => t.cpuMs)),
})

async function run(driver: DriverName, file: string, snapshotDir: string): Promise<DriverChildResult> {
  const connection = await connect(driver, file)
  // The relay's connection settings (db/database.ts), and the page cache it gets from better-sqlite3's
  // build (16 MB; SQLite's own default, node:sqlite's, is 2 MB): the drivers are compared, not their defaults.
  const pragmas = ['journal_mode = WAL', 'synchronous = NORMAL', 'busy_timeout = 5000', 'foreign_keys = ON']
  for (const pragma of [...pragmas, 'cache_size = -16000']) {
    connection.exec(`pragma ${pragma}`)
  }
  const db = new Kysely<RelayDB>({ dialect: new SqliteDialect({ database: withStatementCache(connection.kysely) }) })
  const baselineRssMb = rssMb()
  const { version } = connection.prepare('select sqlite_version() as version').get() as { version: string }
  const { maxId, newest } = connection.prepare('select max(id) as maxId, max(ts) as newest from readings').get() as {
    maxId: number
    newest: string
  }

  // Point reads by id, in an order that defeats any locality (a fixed LCG: the same ids on both drivers).
  const byId = connection.prepare('select id, sensor_id, ts, value, unit, quality from readings where id = ?')
  let seed = 12_345
  const reads = await timed(() => {
    for (let i = 0; i < pointReads; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      if (!byId.get((seed % maxId) + 1)) {
        throw new Error('a point read found no row')
      }
    }
  })

  // The dashboard's collector statistics: the relay's own query function, through Kysely.
  const healthCalls: Took[] = []
  for (let call = -3; call < collectorHealthCalls; call++) {
    const took = await timed(async () => {
      const health = await findCollectorHealth(db)
      if (health.healthy.count === 0) {
        throw new Error('the collector statistics counted no collector')
      }
    })
    if (call >= 0) {
      healthCalls.push(took)
    }
  }

  const since = new Date(new Date(newest).getTime() - 3_600_000).toISOString()
  const aggregate = connection.prepare(`select sensor_id, count(*) as readings, avg(value) as mean,
      min(value) as low, max(value) as high from readings where ts >= ? group by sensor_id`)
  const aggregateRuns: Took[] = []
  for (let call = -1; call < aggregateCalls; call++) {
    const took = await timed(() => {
      if (aggregate.all(since).length === 0) {
        throw new Error('the readings aggregate found no sensor')
      }
    })
    if (call >= 0) {
      aggregateRuns.push(took)
    }
  }

  const insert = connection.prepare('insert into readings (sensor_id, ts, value, unit, quality) values (?, ?, ?, ?, ?)')
  const start = new Date(newest).getTime()
  const inserts = await timed(() => {
    for (let batch = 0; batch < insertTransactions; batch++) {
      const ts = new Date(start + (batch + 1) * 10_000).toISOString()
      connection.exec('begin')
      for (let sensor = 0; sensor < readingsPerTransaction; sensor++) {
        insert.run(`site-1/line-${sensor % 12}/sensor-${sensor}`, ts, 20 + ((batch + sensor) % 97) / 10, 'degC', 'good')
      }
      connection.exec('commit')
    }
  })

  const vacuumTarget = path.join(snapshotDir, `${driver.replace(/\W/g, '-')}-vacuum.db`)
  const vacuum = await timed(() => connection.prepare('vacuum into ?').run(vacuumTarget))
  const backupTarget = path.join(snapshotDir, `${driver.replace(/\W/g, '-')}-backup.db`)
  const backup = await timed(() => connection.backup(backupTarget))
  const { size } = statSync(vacuumTarget)

  await db.destroy()
  const rows = insertTransactions * readingsPerTransaction
  const figures = (on: keyof Took): Record<TimedFigure, number> => ({
    insertRowsPerSecond: rows / (inserts[on] / 1000),
    pointReadsPerSecond: pointReads / (reads[on] / 1000),
    collectorHealthMs: medianOf(healthCalls)[on],
    readingsAggregateMs: medianOf(aggregateRuns)[on],
    vacuumIntoMs: vacuum[on],
    backupApiMs: backup[on],
  })
  return {
    driver,
    sqliteVersion: version,
    ...figures('wallMs'),
    snapshotBytes: size,
    baselineRssMb,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    onCpu: figures('cpuMs'),
  }
}

const [driver, file, snapshotDir] = process.argv.slice(2)
if (process.argv[1] && import.meta.filename === path.resolve(process.argv[1])) {
  if (!driverNames.includes(driver as DriverName) || !file || !snapshotDir) {
    throw new Error(`usage: sqlite-driver-child <${driverNames.join(' | ')}> <database file> <snapshot folder>`)
  }
  const result = await run(driver as DriverName, file, snapshotDir)
  process.stdout.write(`${JSON.stringify(result)}\n`)
}
