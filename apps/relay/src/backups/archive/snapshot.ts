import { existsSync } from 'node:fs'
import { rm, stat } from 'node:fs/promises'
import { runSqliteWorker } from './sqlite-worker.js'

export type SnapshotOptions = {
  /** The live database; other connections may go on writing to it. */
  sourceFile: string
  /** Where the copy goes; must not exist yet. */
  targetFile: string
  /** Whether the copy is synced to disk before it counts as written (default true). */
  durable?: boolean
  /** Called when the source is open and the copy starts: the moment an abort stops a copy under way. */
  onCopying?: () => void
  signal?: AbortSignal
}

/** A snapshot under way: the copy is readable once `copied` resolves, and trustworthy once `checked` does. */
export type RunningSnapshot = {
  /** Resolves with the size of the copy in bytes. */
  copied: Promise<number>
  checked: Promise<void>
  /** Stops the worker and removes the copy; for a caller that gives up. */
  discard(): Promise<void>
}

/**
 * A consistent copy of a live SQLite database, made on a connection of its own in a worker thread
 * (VACUUM INTO: one read transaction, so every row committed before the snapshot began is in it, and
 * writers are never blocked in WAL mode), then checked with `PRAGMA integrity_check`. The event loop
 * only waits. On failure or abort the copy is removed and the error thrown.
 */
export async function snapshotDatabase(options: SnapshotOptions): Promise<{ file: string; size: number }> {
  const snapshot = startSnapshot(options)
  const size = await snapshot.copied
  await snapshot.checked
  return { file: options.targetFile, size }
}

/**
 * Like `snapshotDatabase`, but hands the copy over as soon as it is written so a reader can start while
 * the integrity check runs; the copy must not be used for anything lasting until `checked` resolves.
 */
export function startSnapshot({
  sourceFile,
  targetFile,
  durable = true,
  onCopying,
  signal,
}: SnapshotOptions): RunningSnapshot {
  // Refused before anything starts: the clean-up below must never remove a file that was not ours.
  if (existsSync(targetFile)) {
    return refused(new Error(`The snapshot target ${targetFile} already exists`))
  }
  if (signal?.aborted) {
    return refused(signal.reason)
  }
  const worker = runSqliteWorker({ kind: 'snapshot', sourceFile, targetFile, durable }, onCopying)
  let discarding: Promise<void> | undefined
  const discard = () => {
    discarding ??= (async () => {
      await worker.stop()
      await removeDatabaseFile(targetFile)
    })()
    return discarding
  }

  // Each stage fails on the first of: the worker's error, an abort. Either way the copy is gone first.
  const guarded = async <T>(stage: Promise<T>): Promise<T> => {
    try {
      return await untilAborted(stage, signal)
    } catch (err) {
      await discard()
      throw err
    }
  }
  const copied = guarded(worker.copied.then(() => stat(targetFile).then((info) => info.size)))
  const checked = guarded(copied.then(() => worker.checked))
  copied.catch(() => {})
  checked.catch(() => {})
  return { copied, checked, discard }
}

/** A snapshot ready to be packed: `size` bytes of `file`. */
export type PackableSnapshot = {
  /** The live database itself while its pages are pinned, or a copy. */
  file: string
  size: number
  /** The page size when `file` is the live database, whose free pages hold deleted rows. */
  livePageSize?: number
  /** When `file` is the live database: the pages of the tables `volatileTables` named. */
  volatilePages?: ReadonlySet<number>
  /** Rejects as soon as the integrity check fails; resolves once it passed. */
  checked: Promise<void>
  /**
   * Tells the snapshot its bytes were read. Resolves once it passed its integrity check (a pin checks
   * now, while its read transaction still holds), and lets go of the database or the copy either way.
   */
  finish(): Promise<void>
  /** Stops at once, unchecked: the worker ends and a copy is removed. Safe to call more than once. */
  discard(): Promise<void>
}

/**
 * A snapshot of a live SQLite database for a backup, read in place when it can be: a worker pins the
 * database file (see `pinPages` in sqlite-worker.ts) so its pages go straight into the archive with no
 * copy written first. When writers keep the file from being pinned, it falls back to a VACUUM INTO copy
 * at `targetFile`, checked while it is packed.
 */
export async function takeSnapshot(
  options: SnapshotOptions & { volatileTables?: readonly string[] },
): Promise<PackableSnapshot> {
  const { sourceFile, signal, volatileTables } = options
  signal?.throwIfAborted()
  const pin = runSqliteWorker({ kind: 'pin', sourceFile, volatileTables })
  let pages: Awaited<typeof pin.pinned>
  try {
    pages = await untilAborted(pin.pinned, signal)
  } catch (err) {
    await pin.stop()
    throw err
  }
  if (!pages) {
    await pin.stop()
    const copy = startSnapshot(options)
    const size = await copy.copied
    const finish = () => copy.checked.finally(copy.discard)
    return { file: options.targetFile, size, checked: copy.checked, finish, discard: copy.discard }
  }
  options.onCopying?.()
  const checked = untilAborted(pin.checked, signal)
  checked.catch(() => {})
  return {
    file: sourceFile,
    size: pages.pageSize * pages.pageCount,
    livePageSize: pages.pageSize,
    volatilePages: new Set(pages.volatilePages),
    checked,
    finish() {
      pin.pagesRead()
      return checked.finally(() => pin.stop())
    },
    discard: () => pin.stop(),
  }
}

function refused(reason: unknown): RunningSnapshot {
  const failed = Promise.reject(reason)
  failed.catch(() => {})
  return { copied: failed, checked: failed, discard: async () => {} }
}

/** A database file and whatever SQLite keeps beside it. */
export async function removeDatabaseFile(file: string): Promise<void> {
  await Promise.all(['', '-journal', '-wal', '-shm'].map((suffix) => rm(`${file}${suffix}`, { force: true })))
}

/** `promise`, or a rejection with the abort reason as soon as `signal` aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) {
    return promise
  }
  if (signal.aborted) {
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(err)
      },
    )
  })
}
