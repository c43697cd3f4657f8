import { backupQuota, type KeepPolicy, MB } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { deletionReasons, fitNewBackup, type QuotaUsage, type StoredBackup } from './quota-fit.js'

const none: KeepPolicy = { keepLast: 0, keepDaily: 0, keepWeekly: 0, keepMonthly: 0 }

/** This relay's backups, one a day from April 29th, with these sizes in MB: `day1`, `day2`, … */
function ownBackups(...sizes: number[]): StoredBackup[] {
  return sizes.map((size, i) => ({
    id: `day${i + 1}`,
    filename: `relay-backup-day${i + 1}.zip`,
    createdAt: new Date(Date.UTC(2026, 3, 29 + i, 3)).toISOString(),
    compressedSize: size * MB,
  }))
}

/** The account's usage: this relay's backups plus what others hold (MB, and counts). */
function usageWith(
  own: StoredBackup[],
  others: { bytes?: number; completed?: number; pending?: number; pendingBytes?: number } = {},
  quota: Partial<QuotaUsage> = {},
): QuotaUsage {
  return {
    totalBytes:
      own.reduce((sum, b) => sum + b.compressedSize, 0) + ((others.bytes ?? 0) + (others.pendingBytes ?? 0)) * MB,
    completedCount: own.length + (others.completed ?? 0),
    pendingCount: others.pending ?? 0,
    ...backupQuota,
    ...quota,
  }
}

type Case = {
  name: string
  own: StoredBackup[]
  others?: Parameters<typeof usageWith>[1]
  quota?: Partial<QuotaUsage>
  policy?: Partial<KeepPolicy>
  archiveMb: number
  /** Deleted ids in order, each with its reason. */
  deleted?: [string, 'outside' | 'kept'][]
  /** The refusal's code and words it must contain. */
  refused?: [string, ...string[]]
}

const cases: Case[] = [
  { name: 'an empty account takes the backup as it is', own: [], archiveMb: 40, deleted: [] },
  {
    name: 'an exact fit deletes nothing',
    own: ownBackups(40, 40),
    others: { bytes: 380 },
    archiveMb: 40,
    deleted: [],
  },
  {
    name: 'one byte over deletes the oldest backup outside the policy',
    own: ownBackups(40, 40, 40),
    others: { bytes: 340 },
    quota: { maxTotalBytes: 500 * MB - 1 },
    policy: { keepLast: 2 },
    archiveMb: 40,
    deleted: [['day1', 'outside']],
  },
  {
    name: 'backups outside the policy go first, even when newer than kept ones',
    own: ownBackups(50, 50, 50, 50, 50),
    policy: { keepMonthly: 2, keepLast: 1 },
    quota: { maxTotalBytes: 225 * MB },
    archiveMb: 50,
    // keepLast keeps day5 (May 3rd); keepMonthly day5 and day2 (April 30th), older than day3.
    deleted: [
      ['day1', 'outside'],
      ['day3', 'outside'],
    ],
  },
  {
    name: 'then the oldest backups the policy keeps, never the newest',
    own: ownBackups(50, 50, 50, 50, 50),
    policy: { keepLast: 3 },
    quota: { maxTotalBytes: 150 * MB },
    archiveMb: 50,
    deleted: [
      ['day1', 'outside'],
      ['day2', 'outside'],
      ['day3', 'kept'],
    ],
  },
  {
    name: 'the count limit deletes as many as it takes, whatever their size',
    own: ownBackups(1, 1, 1, 1),
    others: { completed: 1, bytes: 1 },
    quota: { maxBackups: 5 },
    policy: { keepDaily: 7 },
    archiveMb: 1,
    deleted: [['day1', 'kept']],
  },
  {
    name: "other relays' usage leaves less room",
    own: ownBackups(50, 50, 50),
    others: { bytes: 360, completed: 7 },
    policy: { keepLast: 1 },
    archiveMb: 50,
    deleted: [
      ['day1', 'outside'],
      ['day2', 'outside'],
    ],
  },
  {
    name: 'pending uploads count toward storage and count',
    own: ownBackups(10, 10, 10),
    others: { pending: 2, pendingBytes: 20 },
    quota: { maxTotalBytes: 60 * MB, maxBackups: 5 },
    policy: { keepLast: 3 },
    archiveMb: 10,
    deleted: [['day1', 'kept']],
  },
  {
    name: 'a policy of zeros but one leaves only the newest as it makes room',
    own: ownBackups(50, 50, 50, 50, 50),
    quota: { maxTotalBytes: 250 * MB },
    policy: { keepMonthly: 1 },
    archiveMb: 50,
    deleted: [['day1', 'outside']],
  },
  {
    name: 'only the newest left, and other relays fill the rest: nothing is deleted',
    own: ownBackups(40, 40),
    others: { bytes: 430 },
    archiveMb: 40,
    refused: [
      'QUOTA_STORAGE',
      "This backup (40.0 MB) does not fit in the account's 500.0 MB of cloud storage, even after deleting every older backup of this relay: " +
        "this relay's newest backup, which is always kept, uses 40.0 MB, and other relays of the account use 430.0 MB. " +
        'Delete backups of the other relays, or leave components out of the backup settings to make backups smaller.',
    ],
  },
  {
    name: 'unfinished uploads are named beside the other relays',
    own: [],
    others: { bytes: 200, pending: 1, pendingBytes: 290 },
    archiveMb: 40,
    refused: ['QUOTA_STORAGE', 'other relays of the account and unfinished uploads use 490.0 MB'],
  },
  {
    name: 'a relay alone whose newest backup leaves no room is told to back up less',
    own: ownBackups(30),
    quota: { maxTotalBytes: 50 * MB },
    archiveMb: 30,
    refused: ['QUOTA_STORAGE', 'uses 30.0 MB. Leave components out of the backup settings to make backups smaller.'],
  },
  {
    name: 'the count limit reached by other relays',
    own: ownBackups(1),
    others: { completed: 499, bytes: 10 },
    archiveMb: 1,
    refused: [
      'QUOTA_COUNT',
      'other relays of the account hold 499, and this relay keeps its newest',
      'limit of 500 backups',
    ],
  },
  {
    name: 'a backup over the per-backup limit is refused before anything is deleted',
    own: ownBackups(40, 40),
    others: { bytes: 430 },
    archiveMb: 50.5,
    refused: [
      'QUOTA_BACKUP_SIZE',
      "This backup is 50.5 MB, over the cloud's limit of 50.0 MB for one backup",
      'frame engine',
    ],
  },
]

describe('making room for a new backup', () => {
  it.each(cases)('$name', ({ own, others, quota, policy, archiveMb, deleted, refused }) => {
    const fit = fitNewBackup({
      usage: usageWith(own, others, quota),
      backups: own.toReversed(),
      policy: { ...none, ...policy },
      archiveBytes: Math.round(archiveMb * MB),
    })
    if (refused) {
      const [code, ...words] = refused
      expect(fit).toMatchObject({ fits: false, code })
      for (const text of words) {
        expect(fit.fits === false && fit.sentence).toContain(text)
      }
      return
    }
    expect(fit.fits).toBe(true)
    const reasons = { outside: deletionReasons.outsidePolicy, kept: deletionReasons.keptByPolicy }
    expect(fit.fits && fit.deletions.map((d) => [d.backup.id, d.reason])).toEqual(
      deleted?.map(([id, reason]) => [id, reasons[reason]]),
    )
  })
})
