import { endpoint } from './endpoint.js'

/**
 * Client-side encryption of cloud backups: with a passphrase set on the relay, each backup is
 * encrypted before it leaves the machine. The passphrase never goes to the cloud.
 */
export const backupPassphraseLimits = { minLength: 12, maxLength: 1024 } as const

const encryptedSuffix = '.encrypted.zip'

/** `relay-backup-<stamp>.zip` becomes `relay-backup-<stamp>.encrypted.zip`. */
export function encryptedBackupName(filename: string): string {
  return `${filename.replace(/\.zip$/i, '')}${encryptedSuffix}`
}

/** Whether a backup's name says it is encrypted, for the lock on its row; restore reads the archive itself. */
export function isEncryptedBackupName(filename: string): boolean {
  return filename.toLowerCase().endsWith(encryptedSuffix)
}

const prefix = '/api/cloud-backups/encryption'

export const backupEncryptionUrls = {
  status: endpoint('GET', prefix),
  set: endpoint('PUT', prefix),
  remove: endpoint('DELETE', prefix),
}
