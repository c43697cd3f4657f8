export {
  type BackupArchive,
  type BackupComponentFlags,
  type BackupProgress,
  type CreateBackupArchiveOptions,
  createBackupArchive,
  defaultPacking,
  type PackedArchive,
  type PackingOptions,
  packBackupArchive,
} from './create-archive.js'
export { BackupManifest, BackupManifestEntry } from './manifest.js'
export {
  type ArchiveLimits,
  BackupArchiveError,
  type ExtractedBackup,
  extractBackupArchive,
  type InspectOptions,
  inspectBackupArchive,
} from './read-archive.js'
export { type SnapshotOptions, snapshotDatabase } from './snapshot.js'
export { backupFilename, removeStaleTempFiles } from './temp-files.js'
