import { type Static, Type } from 'typebox'
import { backupRetentionUrls, keepCountRange } from './backup-retention.plain.js'
import { routesOf } from './endpoint.js'
import { ErrorBody } from './errors.js'

const KeepCount = Type.Integer({ minimum: keepCountRange.min, maximum: keepCountRange.max })
const Count = Type.Integer({ minimum: 0 })

export const KeepPolicy = Type.Object(
  {
    /** The N newest completed backups. */
    keepLast: KeepCount,
    /** The newest backup of each of the last N UTC days that have one. */
    keepDaily: KeepCount,
    /** The newest backup of each of the last N ISO weeks that have one. */
    keepWeekly: KeepCount,
    /** The newest backup of each of the last N months that have one. */
    keepMonthly: KeepCount,
  },
  { additionalProperties: false },
)
export type KeepPolicy = Static<typeof KeepPolicy>

/** Any subset of the counts; the policy they make must still keep at least one backup. */
export const KeepPolicyChange = Type.Partial(KeepPolicy, { additionalProperties: false, minProperties: 1 })
export type KeepPolicyChange = Static<typeof KeepPolicyChange>

/** How many backups of this relay the account's quota holds, measured by its newest backup. */
export const RetentionProjection = Type.Object({
  /** Size of this relay's newest completed backup; null before its first. */
  backupBytes: Type.Union([Count, Type.Null()]),
  /** Backups of that size the quota holds beside the next upload; null before the first backup. */
  fit: Type.Union([Count, Type.Null()]),
  /** The most backups the policy keeps at the account's backup frequency. */
  policyKeeps: Count,
  /** Bytes that other relays of the account and unfinished uploads hold. */
  otherBytes: Count,
  /** The policy keeps more than fit: each new backup then deletes ones the policy would keep. */
  exceedsQuota: Type.Boolean(),
  /** The projection in one sentence, with what to change when the policy keeps more than fit. */
  sentence: Type.String(),
})
export type RetentionProjection = Static<typeof RetentionProjection>

export const RetentionReply = Type.Object({
  success: Type.Literal(true),
  policy: KeepPolicy,
  /** Null when the cloud cannot tell the usage (not signed in, unreachable, no license). */
  projection: Type.Union([RetentionProjection, Type.Null()]),
  /** Why there is no projection; null when there is one. */
  reason: Type.Union([Type.String(), Type.Null()]),
})
export type RetentionReply = Static<typeof RetentionReply>

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody }

const backupRetentionSchemas = {
  getRetention: { response: { 200: RetentionReply, ...errors } },
  updateRetention: { body: KeepPolicyChange, response: { 200: RetentionReply, ...errors } },
} as const
export type BackupRetentionSchemas = typeof backupRetentionSchemas

export const backupRetentionRoutes = routesOf(backupRetentionUrls, backupRetentionSchemas)
