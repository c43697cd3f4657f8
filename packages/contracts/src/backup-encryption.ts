import { type Static, Type } from 'typebox'
import { backupEncryptionUrls, backupPassphraseLimits } from './backup-encryption.plain.js'
import { routesOf } from './endpoint.js'
import { ErrorBody } from './errors.js'

/** Whether the relay encrypts its backups, and since when; never the passphrase itself. */
export const BackupEncryptionStatus = Type.Object({
  success: Type.Literal(true),
  enabled: Type.Boolean(),
  setAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
})
export type BackupEncryptionStatus = Static<typeof BackupEncryptionStatus>

/** A backup passphrase, as typed: it is used exactly, spaces included. */
export const BackupPassphrase = Type.String({
  minLength: backupPassphraseLimits.minLength,
  maxLength: backupPassphraseLimits.maxLength,
})

export const SetBackupPassphraseBody = Type.Object({ passphrase: BackupPassphrase }, { additionalProperties: false })
export type SetBackupPassphraseBody = Static<typeof SetBackupPassphraseBody>

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody }

const backupEncryptionSchemas = {
  status: { response: { 200: BackupEncryptionStatus, ...errors } },
  set: { body: SetBackupPassphraseBody, response: { 200: BackupEncryptionStatus, ...errors } },
  remove: { response: { 200: BackupEncryptionStatus, ...errors } },
} as const
export type BackupEncryptionSchemas = typeof backupEncryptionSchemas

export const backupEncryptionRoutes = routesOf(backupEncryptionUrls, backupEncryptionSchemas)
