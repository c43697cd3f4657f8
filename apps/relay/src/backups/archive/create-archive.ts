import { createHash } from 'node:crypto'
import { type FileHandle, lstat, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {
  type BackupManifest,
  type BackupManifestEntry,
  databaseEntry,
  entryNameProblem,
  frameEngineFolder,
  identityEntry,
  keysFolder,
  manifestEntry,
  manifestFormatVersion,
} from './manifest.js'
import { type PackableSnapshot, takeSnapshot } from './snapshot.js'
import { backupFilename, tempStem } from './temp-files.js'
import { type FreePages, readFreePages, withoutUnusedBytes } from './unused-bytes.js'
import { bufferSource, createZipWriter, openFileSource } from './zip-writer.js'

export type BackupComponentFlags = { includeKeys: boolean; includeIdentity: boolean; includeFrameEngine: boolean }

export type BackupProgress = { stage: 'snapshot' | 'packing'; bytesDone: number; bytesTotal: number }

/** How entries are deflated. */
export type PackingOptions = {
  /** zlib level. */
  level: number
  /** Chunks deflated at once on the thread pool. */
  concurrency: number
  /** Bytes per chunk read and deflated. */
  chunkBytes: number
  /** ZIP64 records even for a small archive; for tests of the large-archive format. */
  forceZip64: boolean
}

export const defaultPacking: PackingOptions = {
  // Measured on 200 MB of sensor readings (see bench/archive.bench.ts), 2 cores: level 3 packs 42.3 MiB
  // in 0.9 s, level 6 37.8 MiB in 1.5 s; levels 1–2 are no faster and pack 49.3 and 45.9 MiB. Level 3
  // keeps a backup about as fast as restic's and well under the 50 MB cap.
  level: 3,
  // One more chunk than cores keeps every core deflating while the event loop reads and writes.
  concurrency: Math.min(8, os.availableParallelism() + 1),
  chunkBytes: 2 * 1024 * 1024,
  forceZip64: false,
}

export type CreateBackupArchiveOptions = {
  /** The live database, `<dataDir>/relay.db`. */
  databaseFile: string
  dataDir: string
  /** Where the snapshot and the archive are written, `<dataDir>/tmp`; created if missing. */
  tempDir: string
  backendId: string
  appVersion: string
  schemaVersion: string
  createdAt: Date
  components: BackupComponentFlags
  onProgress?: (progress: BackupProgress) => void
  signal?: AbortSignal
  packing?: Partial<PackingOptions>
  /**
   * Fingerprint what the backup would hold (see `contentFingerprint`) and, when it equals `unchangedSince`,
   * pack nothing. Only a database read in place is fingerprinted.
   */
  fingerprint?: false | { volatileTables: readonly string[]; unchangedSince?: string }
}

/** What `packBackupArchive` returns when the content matched `fingerprint.unchangedSince`. */
export type UnchangedContent = { unchanged: true; fingerprint: string }

export type BackupArchive = {
  /** The finished archive in `tempDir`; the caller removes it once it is uploaded. */
  file: string
  /** `relay-backup-<UTC timestamp>.zip`, the name to upload it under. */
  filename: string
  /** Bytes of the archive. */
  size: number
  /** SHA-256 of the archive, hex. */
  sha256: string
  /** Bytes of every entry, unpacked. */
  uncompressedSize: number
  manifest: BackupManifest
  /** The content's fingerprint, when one was asked for and the database was read in place. */
  fingerprint?: string
}

type SourceFile = { name: string; file: string; size: number; mtime: Date; mode: number }

/** An archive packed from a snapshot whose integrity check may still be running. */
export type PackedArchive = BackupArchive & {
  /**
   * Resolves once the database snapshot passed `PRAGMA integrity_check`; until then the archive must not
   * count as a backup. Rejects with what the check found.
   */
  checked: Promise<void>
}

/**
 * Builds a backup archive and returns it once the snapshot passed its integrity check; the archive is
 * removed when the check fails. See `packBackupArchive`.
 */
export async function createBackupArchive(
  options: Omit<CreateBackupArchiveOptions, 'fingerprint'>,
): Promise<BackupArchive> {
  const { checked, ...archive } = (await packBackupArchive(options)) as PackedArchive
  try {
    await checked
  } catch (err) {
    await rm(archive.file, { force: true })
    throw err
  }
  return archive
}

/**
 * Packs a backup archive: a snapshot of the live database (its own pages, pinned by a worker thread, or
 * a copy), deflated in one streaming pass with the chosen components into a ZIP while every entry is
 * hashed, and the manifest last. The snapshot's integrity check runs in the worker alongside the
 * packing; the archive is returned as soon as it is written, the check perhaps still running (it then
 * overlaps the upload), and a check that fails while the database is still being packed stops the
 * packing at once. Memory stays bounded by a few chunks whatever the
 * database size. On failure or abort every temp file is removed and the error thrown.
 */
export async function packBackupArchive(
  options: CreateBackupArchiveOptions,
): Promise<PackedArchive | UnchangedContent> {
  const { databaseFile, dataDir, tempDir, createdAt, components, onProgress, signal } = options
  const packing = { ...defaultPacking, ...options.packing }
  signal?.throwIfAborted()
  await mkdir(tempDir, { recursive: true, mode: 0o700 })
  const stem = tempStem(tempDir, createdAt)
  const snapshotFile = `${stem}.snapshot.db`
  const partialFile = `${stem}.zip.partial`
  const archiveFile = `${stem}.zip`
  const report = (stage: BackupProgress['stage'], bytesDone: number, bytesTotal: number) =>
    onProgress?.({ stage, bytesDone, bytesTotal })

  const databaseSize = await databaseBytes(databaseFile)
  report('snapshot', 0, databaseSize)
  const snapshot = await takeSnapshot({
    sourceFile: databaseFile,
    targetFile: snapshotFile,
    durable: false,
    signal,
    volatileTables: options.fingerprint ? options.fingerprint.volatileTables : undefined,
  })
  // A failed integrity check stops the packing at once rather than after the whole database.
  const checkFailed = new AbortController()
  snapshot.checked.catch((err: unknown) => checkFailed.abort(err))
  const packingSignal = signal ? AbortSignal.any([signal, checkFailed.signal]) : checkFailed.signal
  let handle: FileHandle | undefined
  let finished: Promise<void> | undefined
  try {
    report('snapshot', snapshot.size, snapshot.size)
    const sources: SourceFile[] = [
      { name: databaseEntry, file: snapshot.file, size: snapshot.size, mtime: createdAt, mode: 0o600 },
      ...(await listComponents(dataDir, components)),
    ]
    // Read once, while the pin holds: what the packer zeroes and the fingerprint leaves out.
    const pageSize = snapshot.livePageSize
    const free = pageSize ? await readFreePages(snapshot.file, pageSize, snapshot.size / pageSize) : undefined
    const fingerprint = options.fingerprint && free ? await contentFingerprint(snapshot, free, sources) : undefined
    if (options.fingerprint && fingerprint !== undefined && fingerprint === options.fingerprint.unchangedSince) {
      await snapshot.discard()
      return { unchanged: true, fingerprint }
    }
    const bytesTotal = sources.reduce((sum, source) => sum + source.size, 0)
    let bytesDone = 0
    report('packing', 0, bytesTotal)

    handle = await open(partialFile, 'wx', 0o600)
    const zip = createZipWriter(handle, { ...packing, signal: packingSignal })
    const entries: BackupManifestEntry[] = []
    for (const source of sources) {
      const file = await openFileSource(source.file, source.size)
      try {
        const content =
          source.name === databaseEntry && pageSize && free ? withoutUnusedBytes(file, pageSize, free) : file
        const { name, size, sha256 } = await zip.addEntry(source.name, content, {
          mtime: source.mtime,
          mode: source.mode,
          expectedSize: source.size,
          onChunk: (bytes) => {
            bytesDone += bytes
            report('packing', bytesDone, bytesTotal)
          },
        })
        entries.push({ name, size, sha256 })
      } finally {
        await file.close()
      }
      if (source.name === databaseEntry) {
        finished = snapshot.finish()
        finished.catch(() => {})
      }
    }

    const manifest: BackupManifest = {
      formatVersion: manifestFormatVersion,
      appVersion: options.appVersion,
      backendId: options.backendId,
      createdAt: createdAt.toISOString(),
      schemaVersion: options.schemaVersion,
      entries,
    }
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`)
    await zip.addEntry(manifestEntry, bufferSource(manifestBytes), {
      mtime: createdAt,
      mode: 0o600,
      expectedSize: manifestBytes.length,
    })
    const { size, sha256 } = await zip.finish()
    await handle.close()
    handle = undefined
    packingSignal.throwIfAborted()
    await rename(partialFile, archiveFile)
    return {
      file: archiveFile,
      filename: backupFilename(createdAt),
      size,
      sha256,
      uncompressedSize: entries.reduce((sum, entry) => sum + entry.size, manifestBytes.length),
      manifest,
      fingerprint,
      checked: finished ?? snapshot.finish(),
    }
  } catch (err) {
    await handle?.close().catch(() => {})
    await rm(partialFile, { force: true })
    // Abandoned: the snapshot's worker and any copy go at once.
    await snapshot.discard()
    throw err
  }
}

/**
 * One hash of what a backup of `sources` would hold, for telling a backup that would store nothing new:
 * the database's pages except free ones, those of the volatile tables (the relay's own notes about
 * itself) and the header fields every write changes, and each component file.
 */
async function contentFingerprint(snapshot: PackableSnapshot, free: FreePages, sources: SourceFile[]): Promise<string> {
  const pageSize = snapshot.livePageSize ?? 0
  const skipped = (page: number) =>
    free.leaves.has(page) || free.trunks.has(page) || (snapshot.volatilePages?.has(page) ?? false)
  const hash = createHash('sha256')
  const buffer = Buffer.allocUnsafe(defaultPacking.chunkBytes)
  for (const source of sources) {
    hash.update(`${source.name}\n`)
    const file = await openFileSource(source.file, source.size)
    try {
      for (let page = 1, bytes = await file.read(buffer); bytes > 0; bytes = await file.read(buffer)) {
        if (source.name !== databaseEntry) {
          hash.update(buffer.subarray(0, bytes))
          continue
        }
        for (let at = 0; at < bytes; at += pageSize, page++) {
          if (page === 1) {
            // The change counter, page count, freelist and version-valid-for move with every write.
            const header = Buffer.from(buffer.subarray(0, pageSize))
            header.fill(0, 24, 40)
            header.fill(0, 92, 96)
            hash.update(header)
          } else if (!skipped(page)) {
            hash.update(buffer.subarray(at, at + pageSize))
          }
        }
      }
    } finally {
      await file.close()
    }
  }
  return hash.digest('hex')
}

/** The database with its write-ahead log: roughly what the snapshot will read. */
async function databaseBytes(databaseFile: string): Promise<number> {
  const sizes = await Promise.all(
    ['', '-wal'].map((suffix) =>
      stat(`${databaseFile}${suffix}`).then(
        (info) => info.size,
        () => 0,
      ),
    ),
  )
  return sizes.reduce((sum, size) => sum + size, 0)
}

async function listComponents(dataDir: string, flags: BackupComponentFlags): Promise<SourceFile[]> {
  const files: SourceFile[] = []
  if (flags.includeIdentity) {
    files.push(...(await listFiles(dataDir, identityEntry)))
  }
  if (flags.includeKeys) {
    files.push(...(await listFiles(dataDir, keysFolder)))
  }
  if (flags.includeFrameEngine) {
    files.push(...(await listFiles(dataDir, frameEngineFolder)))
  }
  for (const file of files) {
    // Refused here rather than written into an archive that restore would refuse.
    const problem = entryNameProblem(file.name)
    if (problem) {
      throw new Error(`Cannot back up ${file.file}: ${problem}`)
    }
  }
  return files
}

/**
 * The regular files at `relative` inside `dataDir`, a file or a folder walked recursively, in name
 * order; missing is empty. Symbolic links are not followed nor stored: one could point outside the
 * data folder, and restore writes only regular files.
 */
async function listFiles(dataDir: string, relative: string): Promise<SourceFile[]> {
  const file = path.join(dataDir, ...relative.split('/'))
  let info: Awaited<ReturnType<typeof lstat>>
  try {
    info = await lstat(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return []
    }
    throw err
  }
  if (info.isFile()) {
    return [{ name: relative, file, size: info.size, mtime: info.mtime, mode: info.mode & 0o777 }]
  }
  if (!info.isDirectory()) {
    return []
  }
  const children = (await readdir(file)).sort()
  const nested = []
  for (const child of children) {
    nested.push(...(await listFiles(dataDir, `${relative}/${child}`)))
  }
  return nested
}
