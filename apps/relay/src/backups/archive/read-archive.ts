import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream, existsSync } from 'node:fs'
import { mkdir, readdir, rm, stat, utimes } from 'node:fs/promises'
import path from 'node:path'
import { Transform, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { isDeepStrictEqual } from 'node:util'
import yauzl, { type Entry, type ZipFile } from 'yauzl'
import { type BackupManifest, databaseEntry, entryNameProblem, manifestEntry, parseManifest } from './manifest.js'
import { runSqliteWorker } from './sqlite-worker.js'

/** What an archive may claim before it is refused as a ZIP bomb or not a relay backup. */
export type ArchiveLimits = {
  maxEntries: number
  /** Bytes of all entries unpacked. */
  maxTotalBytes: number
  /** Unpacked / packed bytes of one entry over 1 MiB. A relay database packs about 5:1. */
  maxRatio: number
  /** Bytes of manifest.json, which is read into memory. */
  maxManifestBytes: number
}

export const defaultLimits: ArchiveLimits = {
  maxEntries: 20_000,
  maxTotalBytes: 32 * 1024 ** 3,
  maxRatio: 200,
  maxManifestBytes: 8 * 1024 ** 2,
}

export type InspectOptions = {
  /** SHA-256 (hex) the whole file must have, as the cloud recorded it. */
  expectedSha256?: string
  /** Bytes the whole file must have. */
  expectedSize?: number
  limits?: Partial<ArchiveLimits>
}

export type ExtractedBackup = {
  /** The staging folder: every entry at its path relative to the data folder. */
  root: string
  /** `<root>/relay.db`, checked with `PRAGMA integrity_check`. */
  databaseFile: string
  /** Entry names written, the manifest's order. */
  files: string[]
}

/** A backup archive that is damaged, tampered with or not one of ours. */
export class BackupArchiveError extends Error {
  override readonly name = 'BackupArchiveError'
}

const regularFile = 0o100000
const fileTypeMask = 0o170000
const unixHost = 3
const msDosDirectory = 0x10
const minimalLocalHeader = 30

/**
 * Verifies a backup archive without unpacking it anywhere: the file's size and SHA-256 when given, the
 * ZIP's structure and entry names, manifest.json, and every entry's size and SHA-256 against the
 * manifest, all streamed. Returns the manifest; throws `BackupArchiveError` saying what is wrong.
 */
export async function inspectBackupArchive(file: string, options: InspectOptions = {}): Promise<BackupManifest> {
  const limits = { ...defaultLimits, ...options.limits }
  await checkWholeFile(file, options)
  return withArchive(file, limits, async (archive) => {
    for (const entry of archive.manifest.entries) {
      await verifyEntry(archive.zip, archive.entries.get(entry.name) as Entry, entry)
    }
    return archive.manifest
  })
}

/**
 * Unpacks a backup archive into `targetDir` (a staging folder, created; it must be empty if it exists):
 * relay.db and each component at its relative path, every entry checked against `manifest` (from
 * `inspectBackupArchive`) as it is written, then `PRAGMA integrity_check` on the database. On any
 * problem nothing is left in `targetDir` and `BackupArchiveError` (or the I/O error) is thrown.
 */
export async function extractBackupArchive(
  file: string,
  manifest: BackupManifest,
  targetDir: string,
  options: { limits?: Partial<ArchiveLimits> } = {},
): Promise<ExtractedBackup> {
  const limits = { ...defaultLimits, ...options.limits }
  const root = path.resolve(targetDir)
  const existed = existsSync(root)
  if (existed && (await readdir(root)).length > 0) {
    throw new Error(`The staging folder ${root} is not empty`)
  }
  await mkdir(root, { recursive: true, mode: 0o700 })
  try {
    await withArchive(file, limits, async (archive) => {
      if (!isDeepStrictEqual(archive.manifest, manifest)) {
        throw new BackupArchiveError('The backup archive changed since it was inspected')
      }
      for (const expected of manifest.entries) {
        const entry = archive.entries.get(expected.name) as Entry
        const target = path.join(root, ...expected.name.split('/'))
        if (!target.startsWith(`${root}${path.sep}`)) {
          throw new BackupArchiveError(`The backup archive has an entry outside the data folder: ${expected.name}`)
        }
        await mkdir(path.dirname(target), { recursive: true, mode: 0o700 })
        // 'wx' never follows or overwrites what is there, so entries cannot write through one another.
        await verifyEntry(archive.zip, entry, expected, createWriteStream(target, { flags: 'wx', mode: 0o600 }))
        const modified = entry.getLastModDate()
        await utimes(target, modified, modified)
      }
    })
    const databaseFile = path.join(root, databaseEntry)
    const check = runSqliteWorker({ kind: 'check', targetFile: databaseFile })
    try {
      await check.checked
    } catch (err) {
      throw new BackupArchiveError(`The database in the backup archive is damaged: ${(err as Error).message}`, {
        cause: err,
      })
    } finally {
      await check.exited
    }
    return { root, databaseFile, files: manifest.entries.map((entry) => entry.name) }
  } catch (err) {
    if (existed) {
      const left = await readdir(root).catch(() => [])
      await Promise.all(left.map((name) => rm(path.join(root, name), { recursive: true, force: true })))
    } else {
      await rm(root, { recursive: true, force: true })
    }
    throw err
  }
}

type OpenArchive = { zip: ZipFile; entries: Map<string, Entry>; manifest: BackupManifest }

/** Opens the archive, checks its structure and manifest, runs `work`, and closes it whatever happens. */
async function withArchive<T>(file: string, limits: ArchiveLimits, work: (archive: OpenArchive) => Promise<T>) {
  let zip: ZipFile
  try {
    zip = await yauzl.openPromise(file, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: true,
      strictFileNames: true,
      validateEntrySizes: true,
    })
  } catch (err) {
    throw damaged(err)
  }
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw new BackupArchiveError(`The backup archive has ${zip.entryCount} entries, more than ${limits.maxEntries}`)
    }
    const entries = checkEntries(zip, await listEntries(zip), limits)
    const manifestFile = entries.get(manifestEntry)
    if (!manifestFile) {
      throw new BackupArchiveError('The backup archive has no manifest.json')
    }
    const manifest = await readManifest(zip, manifestFile, limits)
    for (const name of entries.keys()) {
      if (name !== manifestEntry && !manifest.entries.some((entry) => entry.name === name)) {
        throw new BackupArchiveError(`The backup archive has an entry its manifest does not list: ${name}`)
      }
    }
    for (const expected of manifest.entries) {
      const entry = entries.get(expected.name)
      if (!entry) {
        throw new BackupArchiveError(`The backup archive lacks ${expected.name}, which its manifest lists`)
      }
      if (entry.uncompressedSize !== expected.size) {
        throw new BackupArchiveError(
          `${expected.name} has ${entry.uncompressedSize} bytes; the manifest says ${expected.size}`,
        )
      }
    }
    return await work({ zip, entries, manifest })
  } catch (err) {
    throw damaged(err)
  } finally {
    zip.close()
  }
}

/** Every entry of `zip`, opened with `lazyEntries`, in the order of its central directory. */
export function listEntries(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = []
    zip.on('entry', (entry: Entry) => {
      entries.push(entry)
      zip.readEntry()
    })
    zip.once('end', () => resolve(entries))
    zip.on('error', reject)
    zip.readEntry()
  })
}

/** Names, kinds, methods and sizes of every entry; entries by name. */
function checkEntries(zip: ZipFile, entries: Entry[], limits: ArchiveLimits): Map<string, Entry> {
  const byName = new Map<string, Entry>()
  let totalBytes = 0
  for (const entry of entries) {
    const name = entry.fileName
    const problem = entryNameProblem(name)
    if (problem) {
      throw new BackupArchiveError(`The backup archive has an ${problem}`)
    }
    if (byName.has(name)) {
      throw new BackupArchiveError(`The backup archive has ${name} twice`)
    }
    byName.set(name, entry)
    const host = entry.versionMadeBy >> 8
    const fileType = (entry.externalFileAttributes >>> 16) & fileTypeMask
    const isSpecial = host === unixHost && fileType !== 0 && fileType !== regularFile
    if (isSpecial || (entry.externalFileAttributes & msDosDirectory) !== 0) {
      throw new BackupArchiveError(`The backup archive has a link, folder or special file: ${name}`)
    }
    if (entry.isEncrypted() || (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)) {
      throw new BackupArchiveError(`The backup archive has an entry stored in a way it cannot read: ${name}`)
    }
    totalBytes += entry.uncompressedSize
    const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize)
    if (entry.uncompressedSize > 1024 * 1024 && ratio > limits.maxRatio) {
      throw new BackupArchiveError(`${name} would unpack to ${Math.round(ratio)} times its packed size`)
    }
  }
  for (const name of byName.keys()) {
    const segments = name.split('/')
    for (let depth = 1; depth < segments.length; depth++) {
      if (byName.has(segments.slice(0, depth).join('/'))) {
        throw new BackupArchiveError(
          `The backup archive has ${segments.slice(0, depth).join('/')} as a file and a folder`,
        )
      }
    }
  }
  if (totalBytes > limits.maxTotalBytes) {
    throw new BackupArchiveError(
      `The backup archive would unpack to ${totalBytes} bytes, more than ${limits.maxTotalBytes}`,
    )
  }
  // Entries whose data overlap (one stored stream listed many times) are how small archives unpack huge.
  const byOffset = [...entries].sort((a, b) => a.relativeOffsetOfLocalHeader - b.relativeOffsetOfLocalHeader)
  for (const [index, entry] of byOffset.entries()) {
    const end = entry.relativeOffsetOfLocalHeader + minimalLocalHeader + entry.fileNameLength + entry.compressedSize
    const next = byOffset[index + 1]?.relativeOffsetOfLocalHeader ?? zip.fileSize
    if (end > next) {
      throw new BackupArchiveError(`The backup archive has entries that overlap: ${entry.fileName}`)
    }
  }
  return byName
}

async function readManifest(zip: ZipFile, entry: Entry, limits: ArchiveLimits): Promise<BackupManifest> {
  if (entry.uncompressedSize > limits.maxManifestBytes) {
    throw new BackupArchiveError(
      `manifest.json has ${entry.uncompressedSize} bytes, more than ${limits.maxManifestBytes}`,
    )
  }
  const chunks: Buffer[] = []
  for await (const chunk of await zip.openReadStreamPromise(entry)) {
    chunks.push(chunk as Buffer)
  }
  try {
    return parseManifest(Buffer.concat(chunks).toString('utf8'))
  } catch (err) {
    throw new BackupArchiveError(`The backup archive's ${(err as Error).message}`)
  }
}

/** Streams one entry through SHA-256 (into `sink` when given) and compares it with the manifest. */
async function verifyEntry(
  zip: ZipFile,
  entry: Entry,
  expected: { name: string; size: number; sha256: string },
  sink?: Writable,
): Promise<void> {
  const hash = createHash('sha256')
  let size = 0
  const measure = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk)
      size += chunk.length
      callback(null, chunk)
    },
  })
  const discard = new Writable({ write: (_chunk, _encoding, callback) => callback() })
  await pipeline(await zip.openReadStreamPromise(entry), measure, sink ?? discard)
  if (size !== expected.size || hash.digest('hex') !== expected.sha256) {
    throw new BackupArchiveError(`${expected.name} does not match the size and SHA-256 checksum in the manifest`)
  }
}

async function checkWholeFile(file: string, { expectedSha256, expectedSize }: InspectOptions): Promise<void> {
  const { size } = await stat(file)
  if (expectedSize !== undefined && size !== expectedSize) {
    throw new BackupArchiveError(`The backup archive has ${size} bytes; ${expectedSize} were expected`)
  }
  if (expectedSha256 !== undefined) {
    const hash = createHash('sha256')
    await pipeline(createReadStream(file), hash)
    if (hash.digest('hex') !== expectedSha256.toLowerCase()) {
      throw new BackupArchiveError('The backup archive does not match its SHA-256 checksum')
    }
  }
}

/** Archive damage as a `BackupArchiveError`; errors of the file system (no space, no access) stay what they are. */
function damaged(err: unknown): Error {
  if (err instanceof BackupArchiveError || (err instanceof Error && 'syscall' in err)) {
    return err
  }
  const message = err instanceof Error ? err.message : String(err)
  return new BackupArchiveError(`The backup archive is damaged or not a relay backup: ${message}`, { cause: err })
}
