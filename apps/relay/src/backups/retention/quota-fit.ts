import { type BackupUsage, type KeepPolicy, MB } from '@relay/contracts'
import { keptByPolicy, newestFirst } from './policy.js'

/** A completed backup of this relay, as the cloud lists it. */
export type StoredBackup = { id: string; filename: string; createdAt: string; compressedSize: number }

export type QuotaUsage = Pick<
  BackupUsage,
  'totalBytes' | 'completedCount' | 'pendingCount' | 'maxBackupBytes' | 'maxTotalBytes' | 'maxBackups'
>

export const deletionReasons = {
  outsidePolicy: 'outside the keep policy',
  keptByPolicy: 'kept by the keep policy, but the quota holds no more',
} as const
export type DeletionReason = (typeof deletionReasons)[keyof typeof deletionReasons]

export type Deletion = { backup: StoredBackup; reason: DeletionReason }

export type QuotaFit =
  | { fits: true; deletions: Deletion[] }
  | { fits: false; code: 'QUOTA_BACKUP_SIZE' | 'QUOTA_STORAGE' | 'QUOTA_COUNT'; sentence: string }

/** "812 kB", "40.0 MB": binary units, as the cloud's quotas count them. */
export function describeBytes(bytes: number): string {
  return bytes < MB ? `${Math.ceil(bytes / 1024)} kB` : `${(bytes / MB).toFixed(1)} MB`
}

export const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`

/**
 * What the account holds besides this relay's completed backups: other relays' backups and every
 * upload not finished yet (pending ones count toward the quotas until they lapse).
 */
export function usageOfOthers(usage: QuotaUsage, backups: readonly StoredBackup[]) {
  const ownBytes = backups.reduce((sum, backup) => sum + backup.compressedSize, 0)
  const others = {
    bytes: Math.max(0, usage.totalBytes - ownBytes),
    count: Math.max(0, usage.completedCount + usage.pendingCount - backups.length),
  }
  const holders =
    usage.pendingCount > 0 ? 'other relays of the account and unfinished uploads' : 'other relays of the account'
  return { ...others, holders }
}

/**
 * Which of this relay's completed backups to delete so that a new archive of `archiveBytes` passes the
 * cloud's quota checks: the oldest the policy does not keep first, then the oldest it keeps, never the
 * newest. When even that is not enough, nothing is deleted and the sentence says what to change.
 */
export function fitNewBackup(input: {
  usage: QuotaUsage
  backups: readonly StoredBackup[]
  policy: KeepPolicy
  archiveBytes: number
}): QuotaFit {
  const { usage, backups, archiveBytes } = input
  if (archiveBytes > usage.maxBackupBytes) {
    return {
      fits: false,
      code: 'QUOTA_BACKUP_SIZE',
      sentence:
        `This backup is ${describeBytes(archiveBytes)}, over the cloud's limit of ${describeBytes(usage.maxBackupBytes)} ` +
        'for one backup: leave components such as the frame engine data out of the backup settings to make it smaller.',
    }
  }
  const [newest, ...older] = newestFirst(backups)
  const kept = keptByPolicy(backups, input.policy)
  const oldestFirst = older.reverse()
  const candidates = [
    ...oldestFirst
      .filter((backup) => !kept.has(backup.id))
      .map((backup) => ({ backup, reason: deletionReasons.outsidePolicy })),
    ...oldestFirst
      .filter((backup) => kept.has(backup.id))
      .map((backup) => ({ backup, reason: deletionReasons.keptByPolicy })),
  ]
  let bytes = usage.totalBytes + archiveBytes
  let count = usage.completedCount + usage.pendingCount + 1
  const deletions: Deletion[] = []
  for (const candidate of candidates) {
    if (bytes <= usage.maxTotalBytes && count <= usage.maxBackups) {
      break
    }
    deletions.push(candidate)
    bytes -= candidate.backup.compressedSize
    count -= 1
  }
  const others = usageOfOthers(usage, backups)
  if (bytes > usage.maxTotalBytes) {
    const holding = [
      newest && `this relay's newest backup, which is always kept, uses ${describeBytes(newest.compressedSize)}`,
      others.bytes > 0 && `${others.holders} use ${describeBytes(others.bytes)}`,
    ].filter(Boolean)
    const whatHolds = holding.length > 0 ? `: ${holding.join(', and ')}` : ''
    return {
      fits: false,
      code: 'QUOTA_STORAGE',
      sentence:
        `This backup (${describeBytes(archiveBytes)}) does not fit in the account's ${describeBytes(usage.maxTotalBytes)} ` +
        `of cloud storage, even after deleting every older backup of this relay${whatHolds}. ` +
        (others.bytes > 0
          ? 'Delete backups of the other relays, or leave components out of the backup settings to make backups smaller.'
          : 'Leave components out of the backup settings to make backups smaller.'),
    }
  }
  if (count > usage.maxBackups) {
    return {
      fits: false,
      code: 'QUOTA_COUNT',
      sentence:
        `The account would hold more than the cloud's limit of ${plural(usage.maxBackups, 'backup')}, even after ` +
        `deleting every older backup of this relay: ${others.holders} hold ${others.count}` +
        `${newest ? ', and this relay keeps its newest' : ''}. Delete backups of the other relays.`,
    }
  }
  return { fits: true, deletions }
}
