import { rm } from 'node:fs/promises'
import path from 'node:path'
import { AppError, type BackupOperation } from '@relay/contracts'
import { decryptBackupArchive, isEncryptedBackup } from './archive/encryption.js'
import {
  type BackupManifest,
  type ExtractedBackup,
  extractBackupArchive,
  inspectBackupArchive,
} from './archive/index.js'
import type { CloudBackups } from './cloud-backups.js'
import type { Operations } from './operations.js'
import { downloadFile } from './transfer.js'

export type FetchBackupDeps = {
  cloudBackups: CloudBackups
  operations: Operations
  /** Migrations this relay knows: a backup made by a newer relay is refused. */
  knownSchemaVersions: readonly string[]
}

export type FetchBackupOptions = {
  /** Opens an encrypted backup: the one the user gave, or the relay's own. */
  passphrase?: string
}

export type FetchedBackup = {
  manifest: BackupManifest
  staged: ExtractedBackup
  /** The backup was encrypted, and the passphrase opened it. */
  encrypted: boolean
}

/**
 * Downloads a cloud backup into `work` (a private temp folder the caller removes) and proves it whole:
 * size and SHA-256 against what the cloud recorded, the manifest and every entry, and the database's
 * `PRAGMA integrity_check`, unpacked into `<work>/staged`. An encrypted backup is first decrypted with
 * `options.passphrase` (every chunk authenticated) and its inner archive checked the same way. Reports the `downloading` and `verifying`
 * stages on `operation`. Nothing outside `work` is touched, so a failure here changes nothing.
 */
export async function fetchVerifiedBackup(
  { cloudBackups, operations, knownSchemaVersions }: FetchBackupDeps,
  operation: BackupOperation,
  backupId: string,
  work: string,
  options: FetchBackupOptions = {},
): Promise<FetchedBackup> {
  const grant = await cloudBackups.requestDownload(backupId)
  operation.filename = grant.filename
  operations.stage(operation, 'downloading', grant.compressedSize)
  const archiveFile = path.join(work, 'backup.zip')
  const arrived = await downloadFile(grant.downloadUrl, archiveFile, (done) => operations.progress(operation, done))
  if (arrived.size !== grant.compressedSize || (grant.sha256 && arrived.sha256 !== grant.sha256)) {
    throw new AppError('CONFLICT', 'The downloaded backup does not match the size and checksum the cloud recorded')
  }

  operations.stage(operation, 'verifying')
  const encrypted = await isEncryptedBackup(archiveFile)
  let plainFile = archiveFile
  if (encrypted) {
    plainFile = path.join(work, 'backup.decrypted.zip')
    await decryptBackupArchive(archiveFile, plainFile, options.passphrase)
    await rm(archiveFile)
  }
  // The inner archive of an encrypted backup was proven whole by its chunks' tags, not by the cloud's checksum.
  const manifest = await inspectBackupArchive(
    plainFile,
    encrypted ? {} : { expectedSha256: grant.sha256 ?? undefined, expectedSize: grant.compressedSize },
  )
  if (!knownSchemaVersions.includes(manifest.schemaVersion)) {
    throw new AppError(
      'CONFLICT',
      `The backup was made by a newer relay (schema ${manifest.schemaVersion}); update first`,
    )
  }
  const staged = await extractBackupArchive(plainFile, manifest, path.join(work, 'staged'))
  return { manifest, staged, encrypted }
}
