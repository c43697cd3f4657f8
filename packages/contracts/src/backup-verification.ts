import { type Static, Type } from 'typebox'
import { backupVerificationUrls, verificationFrequencies } from './backup-verification.plain.js'
import { routesOf } from './endpoint.js'
import { BackupVerificationMark, relayBackupErrors as errors, OperationStarted } from './relay-backups.js'

const Timestamp = Type.String({ format: 'date-time' })

export const VerificationSettings = Type.Object(
  { frequency: Type.Enum(verificationFrequencies) },
  { additionalProperties: false },
)
export type VerificationSettings = Static<typeof VerificationSettings>

/** The last verification the relay ran, of whichever backup. */
export const VerificationRun = Type.Object({ backupId: Type.String(), ...BackupVerificationMark.properties })
export type VerificationRun = Static<typeof VerificationRun>

export const VerificationOverview = Type.Object({
  success: Type.Literal(true),
  settings: VerificationSettings,
  lastRun: Type.Union([VerificationRun, Type.Null()]),
  /** When the scheduler next verifies the newest backup: at its next cycle once this has passed; null when off. */
  nextDueAt: Type.Union([Timestamp, Type.Null()]),
})
export type VerificationOverview = Static<typeof VerificationOverview>

const BackupIdParams = Type.Object({ backupId: Type.String({ format: 'uuid' }) })

const backupVerificationSchemas = {
  verify: { params: BackupIdParams, response: { 202: OperationStarted, ...errors } },
  overview: { response: { 200: VerificationOverview, ...errors } },
  saveSettings: { body: VerificationSettings, response: { 200: VerificationOverview, ...errors } },
} as const
export type BackupVerificationSchemas = typeof backupVerificationSchemas

export const backupVerificationRoutes = routesOf(backupVerificationUrls, backupVerificationSchemas)
