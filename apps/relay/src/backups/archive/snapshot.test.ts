import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { tempDir } from '@relay/testkit'
import SQLite from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase } from '../../../test/database.js'
import { snapshotDatabase, startSnapshot, takeSnapshot } from './snapshot.js'
import { runSqliteWorker } from './sqlite-worker.js'

const driver = createRequire(import.meta.url).resolve('better-sqlite3')
const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup()
  }
})

async function relayDatabase(readingsBytes = 0) {
  const database = await createTestDatabase()
  cleanups.push(() => database.dispose())
  if (readingsBytes > 0) {
    addReadings(database.sqlite, readingsBytes)
  }
  return database
}

function folder() {
  const dir = tempDir('relay-snapshot-')
  cleanups.push(() => dir.remove())
  return dir.path
}

/** Rows of ~70 bytes until the table holds about `bytes`. */
function addReadings(sqlite: SQLite.Database, bytes: number) {
  sqlite.exec(`create table if not exists readings (
    id integer primary key, sensor_id text not null, ts text not null, value real not null, unit text not null)`)
  sqlite
    .prepare(`with recursive n(i) as (select 1 union all select i + 1 from n where i < ?)
      insert into readings (sensor_id, ts, value, unit)
      select 'site-1/line-' || (i % 12) || '/temp-' || (i % 240), strftime('%Y-%m-%dT%H:%M:%fZ', 1790000000 + i * 10, 'unixepoch'),
        round(21 + (i % 97) / 10.0, 1), 'degC' from n`)
    .run(Math.ceil(bytes / 70))
}

/** Another process inserting into `writes` as fast as it can, as a busy relay would. */
function startWriter(file: string) {
  const script = `
    const Database = require(process.argv[2])
    const db = new Database(process.argv[1])
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.pragma('busy_timeout = 5000')
    const insert = db.prepare('insert into writes (at) values (?)')
    for (;;) insert.run(Date.now())
  `
  const child = spawn(process.execPath, ['-e', script, file, driver], { stdio: 'ignore' })
  cleanups.push(() => child.kill('SIGKILL'))
  return child
}

async function until(condition: () => boolean, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > end) {
      throw new Error('timed out waiting')
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('database snapshot', () => {
  it('holds every row committed before it began while another process keeps writing', async () => {
    const database = await relayDatabase(20 * 1024 * 1024)
    database.sqlite.exec('create table writes (id integer primary key, at integer not null)')
    const lastWrite = () =>
      (database.sqlite.prepare('select max(id) as id from writes').get() as { id: number | null }).id ?? 0
    startWriter(database.file)
    await until(() => lastWrite() > 100)

    const committedBefore = lastWrite()
    const target = path.join(folder(), 'copy.db')
    const { size } = await snapshotDatabase({ sourceFile: database.file, targetFile: target })
    const committedAfter = lastWrite()

    expect(committedAfter).toBeGreaterThan(committedBefore)
    const copy = new SQLite(target, { readonly: true })
    cleanups.push(() => copy.close())
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok')
    const kept = copy.prepare('select count(*) as n from writes where id <= ?').get(committedBefore) as { n: number }
    expect(kept.n).toBe(committedBefore)
    expect(copy.prepare('select count(*) as n from readings').get()).toEqual(
      database.sqlite.prepare('select count(*) as n from readings').get(),
    )
    // The copy stands alone: no write-ahead log beside it, and its tables are the relay's.
    expect(copy.pragma('journal_mode', { simple: true })).toBe('delete')
    expect(readdirSync(path.dirname(target))).toEqual(['copy.db'])
    expect(size).toBe(readFileSync(target).length)
    const tables = copy.prepare("select name from sqlite_master where type = 'table'").pluck().all()
    expect(tables).toEqual(expect.arrayContaining(['kysely_migration', 'notifications', 'readings', 'writes']))
  })

  it('keeps the event loop turning while it copies and checks', async () => {
    const database = await relayDatabase(40 * 1024 * 1024)
    let ticks = 0
    const timer = setInterval(() => ticks++, 5)
    const started = performance.now()
    await snapshotDatabase({ sourceFile: database.file, targetFile: path.join(folder(), 'copy.db') })
    const elapsed = performance.now() - started
    clearInterval(timer)
    // Work on this thread would hold every tick back until it finished: at most one or two would fire.
    expect(elapsed).toBeGreaterThan(50)
    expect(ticks).toBeGreaterThanOrEqual(Math.min(10, Math.floor(elapsed / 5 / 4)))
  })

  it('refuses a target that already exists and leaves it as it was', async () => {
    const database = await relayDatabase()
    const target = path.join(folder(), 'copy.db')
    writeFileSync(target, 'not ours')
    await expect(snapshotDatabase({ sourceFile: database.file, targetFile: target })).rejects.toThrow(/already exists/)
    expect(readFileSync(target, 'utf8')).toBe('not ours')
  })

  it('removes the copy when aborted while it is written', async () => {
    const database = await relayDatabase(20 * 1024 * 1024)
    const dir = folder()
    const target = path.join(dir, 'copy.db')
    const controller = new AbortController()
    let copyExisted = false
    const snapshot = snapshotDatabase({
      sourceFile: database.file,
      targetFile: target,
      onCopying: () => {
        copyExisted = existsSync(target)
        controller.abort(new Error('stopped by the test'))
      },
      signal: controller.signal,
    })
    await expect(snapshot).rejects.toThrow('stopped by the test')
    expect(copyExisted).toBe(true)
    expect(readdirSync(dir)).toEqual([])
  })

  it('removes the copy when aborted while it is checked', async () => {
    const database = await relayDatabase(20 * 1024 * 1024)
    const dir = folder()
    const target = path.join(dir, 'copy.db')
    const controller = new AbortController()
    const snapshot = startSnapshot({ sourceFile: database.file, targetFile: target, signal: controller.signal })
    await snapshot.copied
    // Aborted in the same turn the copy is reported: before the integrity check can be.
    expect(existsSync(target)).toBe(true)
    controller.abort(new Error('stopped by the test'))
    await expect(snapshot.checked).rejects.toThrow('stopped by the test')
    expect(readdirSync(dir)).toEqual([])
  })

  it('refuses a damaged database and leaves no copy', async () => {
    const database = await relayDatabase(2 * 1024 * 1024)
    await database.close()
    // Overwrite a stretch of b-tree pages in the middle of the file.
    const bytes = readFileSync(database.file)
    bytes.fill(0x5a, Math.floor(bytes.length / 2), Math.floor(bytes.length / 2) + 8192)
    const damaged = path.join(folder(), 'damaged.db')
    writeFileSync(damaged, bytes)
    const dir = folder()
    await expect(snapshotDatabase({ sourceFile: damaged, targetFile: path.join(dir, 'copy.db') })).rejects.toThrow(
      /malformed|integrity/,
    )
    expect(readdirSync(dir)).toEqual([])
  })

  it('reports what the integrity check finds in a damaged file', async () => {
    const database = await relayDatabase(2 * 1024 * 1024)
    await database.close()
    const bytes = readFileSync(database.file)
    // Page 2 onwards hold the schema's tables; a zeroed page breaks the b-tree without hiding the file header.
    bytes.fill(0, 4096 * 3, 4096 * 4)
    const damaged = path.join(folder(), 'damaged.db')
    writeFileSync(damaged, bytes)
    const check = runSqliteWorker({ kind: 'check', targetFile: damaged })
    await expect(check.checked).rejects.toThrow(/integrity check|malformed/)
    await check.exited
    expect(existsSync(damaged)).toBe(true)
  })
})

describe('live snapshot for a backup', () => {
  /** The snapshot's bytes as a database file of their own, read while the snapshot holds. */
  async function readOut(snapshot: Awaited<ReturnType<typeof takeSnapshot>>, target: string) {
    const bytes = readFileSync(snapshot.file).subarray(0, snapshot.size)
    writeFileSync(target, bytes)
    await snapshot.finish()
    return new SQLite(target, { readonly: true })
  }

  it('reads an idle database in place, checks it once its pages were read, and lets go', async () => {
    const database = await relayDatabase(1024 * 1024)
    const target = path.join(folder(), 'copy.db')
    const snapshot = await takeSnapshot({ sourceFile: database.file, targetFile: target })
    expect(snapshot.file).toBe(database.file)
    expect(snapshot.livePageSize).toBe(database.sqlite.pragma('page_size', { simple: true }))
    expect(existsSync(target)).toBe(false)
    const copy = await readOut(snapshot, path.join(folder(), 'read.db'))
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(copy.prepare('select count(*) as n from readings').get()).toEqual(
      database.sqlite.prepare('select count(*) as n from readings').get(),
    )
    copy.close()
    // Let go: a full checkpoint can copy the log back again.
    database.sqlite.exec("insert into app_settings (key, value, updated_at) values ('after', '1', 'now')")
    expect(database.sqlite.pragma('wal_checkpoint(TRUNCATE)')).toEqual([{ busy: 0, log: 0, checkpointed: 0 }])
  })

  it('holds the pages it pinned while another process keeps writing and checkpointing', async () => {
    const database = await relayDatabase(5 * 1024 * 1024)
    database.sqlite.exec('create table writes (id integer primary key, at integer not null)')
    const lastWrite = () =>
      (database.sqlite.prepare('select max(id) as id from writes').get() as { id: number | null }).id ?? 0
    startWriter(database.file)
    await until(() => lastWrite() > 100)
    for (let round = 0; round < 5; round++) {
      const committed = lastWrite()
      const snapshot = await takeSnapshot({ sourceFile: database.file, targetFile: path.join(folder(), 'copy.db') })
      // While the pages are read, the writer commits on and checkpoints run.
      await until(() => lastWrite() > committed + 200)
      database.sqlite.pragma('wal_checkpoint(PASSIVE)')
      const copy = await readOut(snapshot, path.join(folder(), `read-${round}.db`))
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok')
      const { id, n } = copy.prepare('select max(id) as id, count(*) as n from writes').get() as {
        id: number
        n: number
      }
      expect(id).toBeGreaterThanOrEqual(committed)
      expect(n).toBe(id)
      copy.close()
    }
  })

  it('falls back to a checked copy when a reader keeps the log from being copied back', async () => {
    const database = await relayDatabase(1024 * 1024)
    database.sqlite.exec("insert into app_settings (key, value, updated_at) values ('first', '1', 'now')")
    const reader = new SQLite(database.file)
    cleanups.push(() => reader.close())
    reader.exec('begin')
    reader.prepare('select count(*) from app_settings').get()
    database.sqlite.exec("insert into app_settings (key, value, updated_at) values ('second', '2', 'now')")

    const target = path.join(folder(), 'copy.db')
    const snapshot = await takeSnapshot({ sourceFile: database.file, targetFile: target })
    expect(snapshot.file).toBe(target)
    expect(snapshot.livePageSize).toBeUndefined()
    const copy = await readOut(snapshot, path.join(folder(), 'read.db'))
    expect(copy.prepare("select value from app_settings where key = 'second'").get()).toEqual({ value: '2' })
    copy.close()
    expect(existsSync(target)).toBe(false)
    reader.exec('commit')
  })

  it('rejects finish() with what the check found in a damaged database', async () => {
    const database = await relayDatabase(2 * 1024 * 1024)
    database.sqlite.pragma('wal_checkpoint(TRUNCATE)')
    const dir = folder()
    const damaged = path.join(dir, 'damaged.db')
    const bytes = readFileSync(database.file)
    const pageSize = Number(database.sqlite.pragma('page_size', { simple: true }))
    // Scribbles over a page in the middle of the readings table.
    bytes.fill(0x5a, pageSize * 100 + 8, pageSize * 101)
    writeFileSync(damaged, bytes)
    const snapshot = await takeSnapshot({ sourceFile: damaged, targetFile: path.join(dir, 'copy.db') })
    await expect(snapshot.finish()).rejects.toThrow(/integrity check/)
  })
})
