import { randomUUID } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import path from 'node:path'
import type { BackupOperation, RestoreBody } from '@relay/contracts'
import type { FastifyBaseLogger } from 'fastify'
import { type HeldRows, type RelayDatabase, safetyCopies, safetyCopiesFolder } from '../db/database.js'
import { identityFile } from '../identity/identity.js'
import { keysFolder } from '../secrets/secret-box.js'
import { snapshotDatabase } from './archive/index.js'
import { frameEngineFolder } from './archive/manifest.js'
import type { CloudBackups } from './cloud-backups.js'
import { fetchVerifiedBackup } from './fetch-backup.js'
import type { Operations } from './operations.js'
import type { BackupPassphrase } from './passphrase.js'
import type { UnfinishedOperations } from './unfinished.js'

const safetyCopiesKept = 3

export type RestoreDeps = {
  database: RelayDatabase
  dataDir: string
  tempDir: string
  cloudBackups: CloudBackups
  unfinished: UnfinishedOperations
  /** Opens an encrypted backup when the restore names no passphrase; a restore keeps it as it is. */
  passphrase: BackupPassphrase
  log: FastifyBaseLogger
  /** The relay's secret key; restoring `keys/` changes it in place, so every holder sees the new one. */
  secretKey: Buffer
  /** Migrations this relay knows: a backup made by a newer relay is refused. */
  knownSchemaVersions: readonly string[]
  /** Stops what works on the database (pollers, senders) before it is replaced. */
  beforeSwap(): Promise<void>
  /** Who is signed in now, here and at the cloud: the restored database keeps them. */
  holdSignIns(): Promise<HeldRows>
  /** Brings the restored database to this relay's schema. */
  migrate(): Promise<void>
  /** Lets every feature reload what it keeps in memory, and resumes what `beforeSwap` stopped. */
  reload(): Promise<void>
  now(): Date
}

/**
 * Restores a cloud backup: download, verify (SHA-256, manifest, every entry, integrity_check), keep a
 * safety copy, then swap the database and put the chosen components in place. Until the swap nothing
 * on the relay changes, so a damaged or tampered archive leaves everything as it was.
 */
export async function restoreBackup(
  deps: RestoreDeps,
  operation: BackupOperation,
  operations: Operations,
  body: RestoreBody,
): Promise<void> {
  const { database, dataDir, tempDir, cloudBackups } = deps
  const backupId = operation.backupId ?? ''
  // The archive code's prefix, so the startup cleanup removes what an interrupted restore left.
  const work = path.join(tempDir, `relay-backup-restore-${randomUUID()}`)
  mkdirSync(work, { recursive: true })
  try {
    const { staged } = await fetchVerifiedBackup(
      { cloudBackups, operations, knownSchemaVersions: deps.knownSchemaVersions },
      operation,
      backupId,
      work,
      { passphrase: body.passphrase ?? (await deps.passphrase.get()) },
    )

    operations.stage(operation, 'restoring')
    const components = {
      keys: (body.includeKeys ?? true) && existsSync(path.join(staged.root, keysFolder)),
      identity: (body.includeIdentity ?? true) && existsSync(path.join(staged.root, identityFile)),
      frameEngine: (body.includeFrameEngine ?? true) && existsSync(path.join(staged.root, frameEngineFolder)),
    }
    await keepSafetyCopy(deps)
    // What belongs to this machine's present, not to the backup: who is signed in, the interrupted
    // backups whose cloud records are still to be released, and the backup passphrase.
    const present = [await deps.holdSignIns(), await deps.unfinished.hold(), await deps.passphrase.hold()]
    await deps.beforeSwap()
    try {
      await database.replaceFile(staged.databaseFile)
      await deps.migrate()
      if (components.keys) {
        replaceFolder(path.join(staged.root, keysFolder), path.join(dataDir, keysFolder))
        deps.secretKey.set(readFileSync(path.join(dataDir, keysFolder, 'secrets.key')))
      }
      if (components.identity) {
        // The backend id is read at start: a restored identity takes effect when the relay restarts.
        renameSync(path.join(staged.root, identityFile), path.join(dataDir, identityFile))
      }
      if (components.frameEngine) {
        replaceFolder(path.join(staged.root, frameEngineFolder), path.join(dataDir, frameEngineFolder))
      }
      await database.db.transaction().execute(async (trx) => {
        for (const rows of present) {
          await rows.putBack(trx)
        }
      })
    } finally {
      await deps.reload()
    }
    deps.log.info({ backupId, components }, 'backup restored')
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** The live database as it is now, beside the data, in case the restored one is not what the user wanted. */
async function keepSafetyCopy({ database, dataDir, now }: RestoreDeps): Promise<void> {
  const folder = path.join(dataDir, safetyCopiesFolder)
  mkdirSync(folder, { recursive: true, mode: 0o700 })
  // To the millisecond: two restores within one second each keep their own copy.
  const stamp = now()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.(\d+)Z$/, '$1Z')
  await snapshotDatabase({ sourceFile: database.file, targetFile: path.join(folder, `relay-${stamp}.db`) })
  const copies = safetyCopies(folder)
  for (const old of copies.slice(0, Math.max(0, copies.length - safetyCopiesKept))) {
    rmSync(path.join(folder, old), { force: true })
  }
}

/** Puts `from` in place of `to`: the old folder is moved aside first and removed once the new one is in. */
function replaceFolder(from: string, to: string): void {
  const aside = `${to}.old-${randomUUID()}`
  if (existsSync(to)) {
    renameSync(to, aside)
  }
  try {
    cpSync(from, to, { recursive: true, preserveTimestamps: true })
  } catch (err) {
    rmSync(to, { recursive: true, force: true })
    if (existsSync(aside)) {
      renameSync(aside, to)
    }
    throw err
  }
  rmSync(aside, { recursive: true, force: true })
}
