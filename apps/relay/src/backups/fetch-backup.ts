import path from 'node:path'
import { AppError, type BackupOperation } from '@relay/contracts'
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

export type FetchedBackup = { manifest: BackupManifest; staged: ExtractedBackup }

/**
 * Downloads a cloud backup into `work` (a private temp folder the caller removes) and proves it whole:
 * size and SHA-256 against what the cloud recorded, the manifest and every entry, and the database's
 * `PRAGMA integrity_check`, unpacked into `<work>/staged`. Reports the `downloading` and `verifying`
 * stages on `operation`. Nothing outside `work` is touched, so a failure here changes nothing.
 */
export async function fetchVerifiedBackup(
  { cloudBackups, operations, knownSchemaVersions }: FetchBackupDeps,
  operation: BackupOperation,
  backupId: string,
  work: string,
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
  const manifest = await inspectBackupArchive(archiveFile, {
    expectedSha256: grant.sha256 ?? undefined,
    expectedSize: grant.compressedSize,
  })
  if (!knownSchemaVersions.includes(manifest.schemaVersion)) {
    throw new AppError(
      'CONFLICT',
      `The backup was made by a newer relay (schema ${manifest.schemaVersion}); update first`,
    )
  }
  const staged = await extractBackupArchive(archiveFile, manifest, path.join(work, 'staged'))
  return { manifest, staged }
}
