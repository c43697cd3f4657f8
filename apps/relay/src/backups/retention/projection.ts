import {
  type BackupFrequency,
  backupDueAfter,
  DAY,
  type KeepPolicy,
  type KeepRule,
  keepRules,
  type RetentionProjection,
} from '@relay/contracts'
import { keptByPolicy, newestFirst } from './policy.js'
import { describeBytes, plural, type QuotaUsage, type StoredBackup, usageOfOthers } from './quota-fit.js'

/** The longest span one bucket of each rule covers. */
const bucketLength: Record<KeepRule, number> = {
  keepLast: 0,
  keepDaily: DAY,
  keepWeekly: 7 * DAY,
  keepMonthly: 31 * DAY,
}

/**
 * The most backups the policy keeps when one is made every `frequency`, counted on such a series
 * ending `now`: the rules overlap (today's backup is the newest of its day, week and month alike),
 * so the sum of the counts would overstate it.
 */
export function mostKeptByPolicy(policy: KeepPolicy, frequency: BackupFrequency, now: Date): number {
  const interval = backupDueAfter[frequency]
  const span = Math.max(...keepRules.map((rule) => policy[rule] * Math.max(bucketLength[rule], interval)))
  const series = Array.from({ length: Math.ceil(span / interval) + 1 }, (_, i) => ({
    id: String(i).padStart(6, '0'),
    createdAt: new Date(now.getTime() - i * interval).toISOString(),
  }))
  return keptByPolicy(series, policy).size
}

/**
 * How many backups of this relay the account's quota holds at the size of its newest one, beside the
 * next upload (which must fit before the policy prunes), against how many the policy keeps.
 */
export function projectRetention(input: {
  usage: QuotaUsage
  backups: readonly StoredBackup[]
  policy: KeepPolicy
  frequency: BackupFrequency
  now: Date
}): RetentionProjection {
  const { usage } = input
  const policyKeeps = mostKeptByPolicy(input.policy, input.frequency, input.now)
  const others = usageOfOthers(usage, input.backups)
  const newest = newestFirst(input.backups)[0]
  if (!newest) {
    return {
      backupBytes: null,
      fit: null,
      policyKeeps,
      otherBytes: others.bytes,
      exceedsQuota: false,
      sentence:
        'This relay has no backup in the cloud yet; after its first, this shows how many fit. ' +
        `Your policy keeps up to ${policyKeeps}.`,
    }
  }
  const size = Math.max(1, newest.compressedSize)
  const held =
    size > usage.maxBackupBytes
      ? 0
      : Math.min(Math.floor((usage.maxTotalBytes - others.bytes) / size), usage.maxBackups - others.count)
  const fit = Math.max(0, held - 1)
  const exceedsQuota = policyKeeps > fit
  const othersUse = others.bytes > 0 ? `; ${others.holders} use ${describeBytes(others.bytes)}` : ''
  const warning = exceedsQuota
    ? ' Each new backup will delete older ones the policy keeps: keep fewer backups or leave components out of the ' +
      `backup settings${othersUse}.`
    : ''
  return {
    backupBytes: newest.compressedSize,
    fit,
    policyKeeps,
    otherBytes: others.bytes,
    exceedsQuota,
    sentence:
      `At ${describeBytes(newest.compressedSize)} a backup, ${plural(fit, 'backup')} of this relay ` +
      `${fit === 1 ? 'fits' : 'fit'} beside the next upload; your policy keeps up to ${policyKeeps}.${warning}`,
  }
}
