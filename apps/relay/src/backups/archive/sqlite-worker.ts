import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/**
 * What the worker does on its own connection: `snapshot` copies `sourceFile` to `targetFile` with
 * VACUUM INTO (one read transaction, so the copy is every row committed before it began) and then
 * checks the copy; `check` only checks `targetFile`; `pin` holds a read transaction on `sourceFile`
 * in which the database file itself is the snapshot (see `pinPages`), checks it, and lets go once the
 * caller has read the pages.
 */
export type SqliteTask =
  | { kind: 'snapshot'; sourceFile: string; targetFile: string; durable: boolean }
  | { kind: 'check'; targetFile: string }
  | { kind: 'pin'; sourceFile: string; volatileTables?: readonly string[] }

/**
 * The pages of a pinned database: the first `pageCount * pageSize` bytes of its file; `volatilePages`
 * are the pages of the tables a `pin` task named (tables and their indexes).
 */
export type PinnedPages = { pageSize: number; pageCount: number; volatilePages: number[] }

type WorkerMessage =
  | { type: 'pinned'; pages: PinnedPages | null }
  | { type: 'copying' }
  | { type: 'copied' }
  | { type: 'checked'; problems: string[] }
  | { type: 'failed'; message: string; code?: string }

export type SqliteWorkerRun = {
  /** A `pin` task's pages, or null when writers kept the file from being pinned (`snapshot` instead). */
  pinned: Promise<PinnedPages | null>
  /** Tells a `pin` task that its pages were read: it ends the read transaction once checked. */
  pagesRead(): void
  /** Resolves when the copy is written (a `check` task resolves at once). */
  copied: Promise<void>
  /** Resolves when `targetFile` passed `PRAGMA integrity_check`; rejects with what it found otherwise. */
  checked: Promise<void>
  /** Resolves once the thread has ended, whichever way. */
  exited: Promise<void>
  /** Ends the thread; native work in progress (one statement) finishes first. */
  stop(): Promise<void>
}

const driver = createRequire(import.meta.url).resolve('better-sqlite3')

// Plain JavaScript evaluated as the worker's source: the same text runs from TypeScript sources (tests,
// tsx) and from compiled dist/, with no worker file to locate or transpile. The main thread only waits for
// messages, so a long VACUUM or integrity_check never blocks its event loop.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const { task } = workerData

function check(db) {
  const rows = db.pragma('integrity_check(20)')
  const problems = rows.map((row) => String(Object.values(row)[0])).filter((line) => line !== 'ok')
  parentPort.postMessage({ type: 'checked', problems })
}

// In WAL mode a reader whose transaction began when every frame of the log had been copied back into the
// database file reads the file alone, and no checkpoint may write to the file while it reads (SQLite's
// WAL read mark 0); in rollback mode the read lock keeps writers out. Either way, for as long as the
// transaction lasts the file's first page_count pages are exactly the snapshot. A checkpoint makes the log
// fully copied; data_version unchanged across it and the transaction's start shows no commit slipped in.
function volatilePages(db) {
  const tables = task.volatileTables || []
  if (tables.length === 0) return []
  const names = tables.map(() => '?').join(', ')
  return db
    .prepare('select pageno from dbstat where name in (select name from sqlite_schema where tbl_name in (' + names + '))')
    .pluck()
    .all(...tables)
}

function pinPages(db) {
  const wal = String(db.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal'
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (let attempt = 0; attempt < 8; attempt++) {
    const before = db.pragma('data_version', { simple: true })
    const copied = wal ? db.pragma('wal_checkpoint(PASSIVE)')[0] : { busy: 0, log: 0, checkpointed: 0 }
    db.exec('begin')
    db.prepare('select count(*) from sqlite_schema').get()
    if (copied.busy === 0 && copied.log === copied.checkpointed && db.pragma('data_version', { simple: true }) === before) {
      return {
        pageSize: db.pragma('page_size', { simple: true }),
        pageCount: db.pragma('page_count', { simple: true }),
        volatilePages: volatilePages(db),
      }
    }
    db.exec('commit')
    Atomics.wait(pause, 0, 0, 10 * (attempt + 1))
  }
  return null
}

function run() {
  if (task.kind === 'pin') {
    const source = new Database(task.sourceFile, { fileMustExist: true })
    source.pragma('busy_timeout = 5000')
    source.pragma('cache_size = -2048')
    const pages = pinPages(source)
    parentPort.postMessage({ type: 'pinned', pages })
    if (!pages) {
      source.close()
      return
    }
    // Checked while the pages are read: the deflater leaves a core partly idle, which the check fills.
    try {
      check(source)
    } catch (err) {
      source.close()
      throw err
    }
    parentPort.once('message', () => source.close())
    return
  }
  if (task.kind === 'snapshot') {
    const source = new Database(task.sourceFile, { readonly: true, fileMustExist: true })
    try {
      source.pragma('busy_timeout = 5000')
      source.pragma('cache_size = -2048')
      // VACUUM INTO writes the copy with this connection's synchronous setting; a copy that is packed and
      // removed right away is not worth an fsync.
      if (!task.durable) source.pragma('synchronous = OFF')
      // VACUUM INTO accepts an empty target: made here, the copy is on disk from the moment it is announced.
      require('node:fs').writeFileSync(task.targetFile, '', { flag: 'wx' })
      parentPort.postMessage({ type: 'copying' })
      source.prepare('vacuum into ?').run(task.targetFile)
    } finally {
      source.close()
    }
    parentPort.postMessage({ type: 'copied' })
  }
  const copy = new Database(task.targetFile, { readonly: true, fileMustExist: true })
  try {
    copy.pragma('cache_size = -2048')
    check(copy)
  } finally {
    copy.close()
  }
}

function fail(err) {
  parentPort.postMessage({ type: 'failed', message: String(err && err.message ? err.message : err), code: err && err.code })
}

try {
  run()
} catch (err) {
  fail(err)
}
`

/**
 * Runs `task` on a connection of its own in a worker thread. A snapshot calls `onCopying` once the source
 * is open and the copy starts.
 */
export function runSqliteWorker(task: SqliteTask, onCopying?: () => void): SqliteWorkerRun {
  const worker = new Worker(workerSource, { eval: true, workerData: { driver, task } })
  const copied = deferred()
  const checked = deferred()
  let resolvePinned!: (pages: PinnedPages | null) => void
  const pinned = new Promise<PinnedPages | null>((resolve) => {
    resolvePinned = resolve
  })
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  if (task.kind !== 'snapshot') {
    copied.resolve()
  }
  if (task.kind !== 'pin') {
    resolvePinned(null)
  }
  const fail = (error: Error) => {
    resolvePinned(null)
    copied.reject(error)
    checked.reject(error)
  }
  worker.on('message', (message: WorkerMessage) => {
    switch (message.type) {
      case 'pinned':
        resolvePinned(message.pages)
        break
      case 'copying':
        onCopying?.()
        break
      case 'copied':
        copied.resolve()
        break
      case 'checked':
        if (message.problems.length === 0) {
          checked.resolve()
        } else {
          checked.reject(new Error(`The database copy failed its integrity check: ${message.problems.join('; ')}`))
        }
        break
      case 'failed':
        fail(
          new Error(`SQLite: ${message.message}${message.code ? ` (${message.code})` : ''}`, { cause: message.code }),
        )
        break
      default:
        message satisfies never
    }
  })
  worker.on('error', (err) => fail(err))
  worker.on('exit', () => fail(new Error('The database worker ended before it finished')))
  return {
    pinned,
    pagesRead: () => worker.postMessage('read'),
    copied: copied.promise,
    checked: checked.promise,
    exited,
    async stop() {
      await worker.terminate()
      await exited
    },
  }
}

type Deferred = { promise: Promise<void>; resolve(): void; reject(error: Error): void }

/** A promise settled from outside; the first settlement wins, and a rejection nobody awaits is not unhandled. */
function deferred(): Deferred {
  let resolve!: () => void
  let reject!: (error: Error) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  promise.catch(() => {})
  return { promise, resolve, reject }
}
