import { backupQuota, defaultKeepPolicy, type KeepPolicy, MB } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { mostKeptByPolicy, projectRetention } from './projection.js'
import type { StoredBackup } from './quota-fit.js'

/** A Wednesday. */
const now = new Date('2026-05-13T12:00:00.000Z')
const none: KeepPolicy = { keepLast: 0, keepDaily: 0, keepWeekly: 0, keepMonthly: 0 }

/** This relay's backups, oldest first, one a day up to yesterday, with these sizes in MB. */
function ownBackups(...sizes: number[]): StoredBackup[] {
  return sizes.map((size, i) => ({
    id: `own${i}`,
    filename: `relay-backup-${i}.zip`,
    createdAt: new Date(now.getTime() - (sizes.length - i) * 86_400_000).toISOString(),
    compressedSize: size * MB,
  }))
}

describe('how many backups the policy keeps', () => {
  it.each<[string, Partial<KeepPolicy>, 'daily' | 'weekly' | 'monthly', number]>([
    // Days May 7–13; weeks add May 3 and April 26; months add the last days of April to December.
    ['the defaults, backing up daily', defaultKeepPolicy, 'daily', 14],
    // The 7 newest (to April 1st) cover the weeks; months add March 25, Feb 25, Jan 28 and Dec 31.
    ['the defaults, backing up weekly', defaultKeepPolicy, 'weekly', 11],
    // Every 30 days: each backup is a day and a month of its own, so the 7 newest cover all.
    ['the defaults, backing up monthly', defaultKeepPolicy, 'monthly', 7],
    ['keepLast alone', { keepLast: 5 }, 'daily', 5],
    ['a policy of zeros but one', { keepMonthly: 1 }, 'daily', 1],
    ['daily counts at a weekly frequency: days that have a backup', { keepDaily: 7 }, 'weekly', 7],
    // 100 days (keepLast within them); 85 Sundays before February 3rd; 96 month ends, three of them Sundays.
    [
      'the largest counts',
      { keepLast: 100, keepDaily: 100, keepWeekly: 100, keepMonthly: 100 },
      'daily',
      100 + 85 + 93,
    ],
  ])('%s', (_, policy, frequency, expected) => {
    expect(mostKeptByPolicy({ ...none, ...policy }, frequency, now)).toBe(expected)
  })
})

describe('the quota projection', () => {
  const project = (
    backups: StoredBackup[],
    others: { bytes?: number; completed?: number; pending?: number } = {},
    policy: KeepPolicy = defaultKeepPolicy,
  ) =>
    projectRetention({
      usage: {
        totalBytes: backups.reduce((sum, b) => sum + b.compressedSize, 0) + (others.bytes ?? 0) * MB,
        completedCount: backups.length + (others.completed ?? 0),
        pendingCount: others.pending ?? 0,
        ...backupQuota,
      },
      backups,
      policy,
      frequency: 'daily',
      now,
    })

  it('has no size to measure before the first backup, and says so', () => {
    expect(project([], { bytes: 100, completed: 2 })).toEqual({
      backupBytes: null,
      fit: null,
      policyKeeps: 14,
      otherBytes: 100 * MB,
      exceedsQuota: false,
      sentence:
        'This relay has no backup in the cloud yet; after its first, this shows how many fit. Your policy keeps up to 14.',
    })
  })

  it('counts what fits beside the next upload, at the size of the newest backup', () => {
    expect(project(ownBackups(45, 30))).toEqual({
      backupBytes: 30 * MB,
      // 500 MB / 30 MB = 16, one of them the next upload.
      fit: 15,
      policyKeeps: 14,
      otherBytes: 0,
      exceedsQuota: false,
      sentence: 'At 30.0 MB a backup, 15 backups of this relay fit beside the next upload; your policy keeps up to 14.',
    })
  })

  it('warns when the policy keeps more than fit, naming what other relays use', () => {
    const projection = project(ownBackups(40, 40), { bytes: 100, completed: 3 })
    expect(projection).toMatchObject({ fit: 9, policyKeeps: 14, exceedsQuota: true, otherBytes: 100 * MB })
    expect(projection.sentence).toBe(
      'At 40.0 MB a backup, 9 backups of this relay fit beside the next upload; your policy keeps up to 14. ' +
        'Each new backup will delete older ones the policy keeps: keep fewer backups or leave components out of the ' +
        'backup settings; other relays of the account use 100.0 MB.',
    )
  })

  it.each<[string, StoredBackup[], Parameters<typeof project>[1], KeepPolicy | undefined, number, boolean]>([
    [
      'an exact fit: 11 kept and the next upload fill the 480 MB left',
      ownBackups(40),
      { bytes: 20 },
      keepLast(11),
      11,
      false,
    ],
    ['one more kept than fit is a warning', ownBackups(40), { bytes: 20 }, keepLast(12), 11, true],
    ['one byte less left holds one fewer', ownBackups(40), { bytes: 20 + 1 / MB }, keepLast(11), 10, true],
    [
      'the count limit, with other relays holding 490',
      ownBackups(1),
      { completed: 490, bytes: 10 },
      keepLast(9),
      9,
      false,
    ],
    ['pending uploads count like other relays', ownBackups(40), { pending: 1, bytes: 80 }, undefined, 9, true],
    ['only the next upload fits', ownBackups(40), { bytes: 430 }, keepLast(1), 0, true],
  ])('%s', (_, backups, others, policy, fit, exceeds) => {
    const projection = project(backups, others, policy)
    expect(projection.fit).toBe(fit)
    expect(projection.exceedsQuota).toBe(exceeds)
  })

  it('speaks of one backup in the singular, and of unfinished uploads beside other relays', () => {
    const projection = project(ownBackups(40), { bytes: 400, pending: 1 })
    expect(projection.sentence).toMatch(/^At 40.0 MB a backup, 1 backup of this relay fits beside the next upload/)
    expect(projection.sentence).toContain('other relays of the account and unfinished uploads use 400.0 MB')
  })
})

/** A policy keeping the `count` newest. */
function keepLast(count: number): KeepPolicy {
  return { ...none, keepLast: count }
}
