import { randomBytes } from 'node:crypto'
import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'

/** Every file the archive code leaves in the temp folder starts with this, finished archives included. */
const tempPrefix = 'relay-backup-'

/** `relay-backup-20261122T130501Z.zip`: the archive's name for upload and download. */
export function backupFilename(createdAt: Date): string {
  return `${tempPrefix}${utcStamp(createdAt)}.zip`
}

/** A fresh path stem in `tempDir` for the files of one archive (its snapshot, the archive being written). */
export function tempStem(tempDir: string, createdAt: Date): string {
  return path.join(tempDir, `${tempPrefix}${utcStamp(createdAt)}-${randomBytes(6).toString('hex')}`)
}

/**
 * Removes what an interrupted backup left in `tempDir` (snapshots, partial and unsent archives); for
 * startup, before any backup runs. Returns the names removed.
 */
export async function removeStaleTempFiles(tempDir: string): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(tempDir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return []
    }
    throw err
  }
  const stale = names.filter((name) => name.startsWith(tempPrefix))
  await Promise.all(stale.map((name) => rm(path.join(tempDir, name), { recursive: true, force: true })))
  return stale
}

function utcStamp(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
}
