import { type Static, Type } from 'typebox'
import { backupPassphraseLimits } from './backup-encryption.plain.js'
import { verificationOutcomes } from './backup-verification.plain.js'
import { BackupRecord, BackupSettings, BackupSettingsChange, BackupStatusReply } from './backups.js'
import { backupLimits } from './backups.plain.js'
import { routesOf } from './endpoint.js'
import { ErrorBody } from './errors.js'
import { backupTriggers, operationKinds, operationStages, relayBackupUrls } from './relay-backups.plain.js'

const Timestamp = Type.String({ format: 'date-time' })
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

/** A backup or restore of this relay, as it runs: polled by the UI for progress. */
export const BackupOperation = Type.Object({
  id: Type.String(),
  kind: Type.Enum(operationKinds),
  trigger: Nullable(Type.Enum(backupTriggers)),
  stage: Type.Enum(operationStages),
  /** Bytes handled in the current stage, and its total when known (0 otherwise). */
  bytesDone: Type.Integer({ minimum: 0 }),
  bytesTotal: Type.Integer({ minimum: 0 }),
  /** The cloud backup it made or restores. */
  backupId: Nullable(Type.String()),
  filename: Nullable(Type.String()),
  error: Nullable(Type.String()),
  startedAt: Timestamp,
  finishedAt: Nullable(Timestamp),
})
export type BackupOperation = Static<typeof BackupOperation>

export const OperationStarted = Type.Object({ success: Type.Literal(true), operationId: Type.String() })
export type OperationStarted = Static<typeof OperationStarted>

export const OperationList = Type.Object({ success: Type.Literal(true), operations: Type.Array(BackupOperation) })
export type OperationList = Static<typeof OperationList>

/** What the relay found when it last verified a backup; `verifiedAt` is its last success. */
export const BackupVerificationMark = Type.Object({
  outcome: Type.Enum(verificationOutcomes),
  verifiedAt: Nullable(Timestamp),
  checkedAt: Timestamp,
  error: Nullable(Type.String()),
})
export type BackupVerificationMark = Static<typeof BackupVerificationMark>

/** The cloud's list, each backup with what the relay found when it last verified it (null: never). */
export const RelayBackupList = Type.Object({
  success: Type.Literal(true),
  backups: Type.Array(Type.Object({ ...BackupRecord.properties, verification: Nullable(BackupVerificationMark) })),
  total: Type.Integer(),
})
export type RelayBackupList = Static<typeof RelayBackupList>
export type RelayBackupRecord = RelayBackupList['backups'][number]

export const RelayBackupListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: backupLimits.listMax, default: 50 }),
    /** Backups of every relay of the account, not only this one. */
    allRelays: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
)
export type RelayBackupListQuery = Static<typeof RelayBackupListQuery>

/** Which parts of a backup to restore; the database always is. Each defaults to what the archive holds. */
export const RestoreBody = Type.Object(
  {
    includeKeys: Type.Optional(Type.Boolean()),
    includeIdentity: Type.Optional(Type.Boolean()),
    includeFrameEngine: Type.Optional(Type.Boolean()),
    /** For an encrypted backup: the passphrase it was made with; without it, the relay's own is used. */
    passphrase: Type.Optional(Type.String({ minLength: 1, maxLength: backupPassphraseLimits.maxLength })),
  },
  { additionalProperties: false },
)
export type RestoreBody = Static<typeof RestoreBody>

const BackupIdParams = Type.Object({ backupId: Type.String({ format: 'uuid' }) })
const OperationIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })
const errors = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  429: ErrorBody,
  503: ErrorBody,
}
/** The error replies of the relay's backup routes, for the routes beside them (verification). */
export const relayBackupErrors = errors

const relayBackupSchemas = {
  status: { response: { 200: BackupStatusReply, ...errors } },
  settings: {
    body: BackupSettingsChange,
    response: { 200: Type.Object({ success: Type.Literal(true), settings: BackupSettings }), ...errors },
  },
  list: { querystring: RelayBackupListQuery, response: { 200: RelayBackupList, ...errors } },
  create: { response: { 202: OperationStarted, ...errors } },
  operations: { response: { 200: OperationList, ...errors } },
  operation: { params: OperationIdParams, response: { 200: BackupOperation, ...errors } },
  download: { params: BackupIdParams, response: { ...errors } },
  restore: { params: BackupIdParams, body: RestoreBody, response: { 202: OperationStarted, ...errors } },
  remove: { params: BackupIdParams, response: { 200: Type.Object({ success: Type.Literal(true) }), ...errors } },
} as const
export type RelayBackupSchemas = typeof relayBackupSchemas

export const relayBackupRoutes = routesOf(relayBackupUrls, relayBackupSchemas)
