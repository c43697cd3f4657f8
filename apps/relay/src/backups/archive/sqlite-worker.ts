import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/**
 * What the worker does on its own connection: `snapshot` copies `sourceFile` to `targetFile` with
 * VACUUM INTO (one read transaction, so the copy is every row committed before it began) and then
 * checks the copy; `check` only checks `targetFile`.
 */
export type SqliteTask =
  | { kind: 'snapshot'; sourceFile: string; targetFile: string; durable: boolean }
  | { kind: 'check'; targetFile: string }

type WorkerMessage =
  | { type: 'copying' }
  | { type: 'copied' }
  | { type: 'checked'; problems: string[] }
  | { type: 'failed'; message: string; code?: string }

export type SqliteWorkerRun = {
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
try {
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
    const rows = copy.pragma('integrity_check(20)')
    const problems = rows.map((row) => String(Object.values(row)[0])).filter((line) => line !== 'ok')
    parentPort.postMessage({ type: 'checked', problems })
  } finally {
    copy.close()
  }
} catch (err) {
  parentPort.postMessage({ type: 'failed', message: String(err && err.message ? err.message : err), code: err && err.code })
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
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  if (task.kind === 'check') {
    copied.resolve()
  }
  const fail = (error: Error) => {
    copied.reject(error)
    checked.reject(error)
  }
  worker.on('message', (message: WorkerMessage) => {
    switch (message.type) {
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
        fail(new Error(`SQLite: ${message.message}`, { cause: message.code }))
        break
      default:
        message satisfies never
    }
  })
  worker.on('error', (err) => fail(err))
  worker.on('exit', () => fail(new Error('The database worker ended before it finished')))
  return {
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
