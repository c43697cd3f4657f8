import type { KeepPolicy } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { isoWeek, keptByPolicy } from './policy.js'

const none: KeepPolicy = { keepLast: 0, keepDaily: 0, keepWeekly: 0, keepMonthly: 0 }

/** Backups named by their creation moment, so a test reads which ones were kept. */
const at = (...moments: string[]) => moments.map((createdAt) => ({ id: createdAt, createdAt }))

describe('keep policy', () => {
  it.each<[string, Partial<KeepPolicy>, string[], Record<string, string[]>]>([
    ['nothing kept of no backups', { keepLast: 3, keepDaily: 7 }, [], {}],
    ['nothing kept by a policy of zeros', {}, ['2026-05-01T10:00:00.000Z', '2026-05-02T10:00:00.000Z'], {}],
    [
      'the N newest by keepLast, whatever their days',
      { keepLast: 2 },
      ['2026-05-01T10:00:00.000Z', '2026-05-03T09:00:00.000Z', '2026-05-03T10:00:00.000Z'],
      { '2026-05-03T10:00:00.000Z': ['keepLast'], '2026-05-03T09:00:00.000Z': ['keepLast'] },
    ],
    [
      'the newest of each day by keepDaily, skipping days without one',
      { keepDaily: 2 },
      ['2026-05-01T10:00:00.000Z', '2026-05-03T08:00:00.000Z', '2026-05-03T20:00:00.000Z', '2026-05-10T01:00:00.000Z'],
      { '2026-05-10T01:00:00.000Z': ['keepDaily'], '2026-05-03T20:00:00.000Z': ['keepDaily'] },
    ],
    [
      'UTC days: 23:59 and 00:00 are two days',
      { keepDaily: 2 },
      ['2026-05-02T23:59:59.999Z', '2026-05-03T00:00:00.000Z', '2026-05-02T00:00:00.000Z'],
      { '2026-05-03T00:00:00.000Z': ['keepDaily'], '2026-05-02T23:59:59.999Z': ['keepDaily'] },
    ],
    [
      'ISO weeks start on Monday: Sunday and the Monday after are two weeks',
      { keepWeekly: 3 },
      ['2026-05-03T12:00:00.000Z', '2026-05-04T12:00:00.000Z', '2026-05-06T12:00:00.000Z', '2026-04-27T12:00:00.000Z'],
      {
        '2026-05-06T12:00:00.000Z': ['keepWeekly'],
        '2026-05-03T12:00:00.000Z': ['keepWeekly'],
      },
    ],
    [
      'the newest of each month by keepMonthly',
      { keepMonthly: 2 },
      ['2026-03-31T23:00:00.000Z', '2026-04-01T00:00:00.000Z', '2026-04-30T23:59:00.000Z', '2026-05-01T00:00:00.000Z'],
      { '2026-05-01T00:00:00.000Z': ['keepMonthly'], '2026-04-30T23:59:00.000Z': ['keepMonthly'] },
    ],
    [
      'every rule that keeps a backup is named; any one keeps it',
      { keepLast: 1, keepDaily: 2, keepMonthly: 2 },
      ['2026-04-20T10:00:00.000Z', '2026-04-28T10:00:00.000Z', '2026-05-01T10:00:00.000Z', '2026-05-02T10:00:00.000Z'],
      {
        '2026-05-02T10:00:00.000Z': ['keepLast', 'keepDaily', 'keepMonthly'],
        '2026-05-01T10:00:00.000Z': ['keepDaily'],
        '2026-04-28T10:00:00.000Z': ['keepMonthly'],
      },
    ],
    [
      'a policy of zeros but one keeps just the newest',
      { keepWeekly: 1 },
      ['2026-05-04T10:00:00.000Z', '2026-05-05T10:00:00.000Z', '2026-05-06T10:00:00.000Z'],
      { '2026-05-06T10:00:00.000Z': ['keepWeekly'] },
    ],
  ])('%s', (_, policy, moments, expected) => {
    const kept = keptByPolicy(at(...moments.toReversed()), { ...none, ...policy })
    expect(Object.fromEntries(kept)).toEqual(expected)
  })

  it('orders backups of the same moment by id, so the same one is kept every time', () => {
    const moment = '2026-05-01T10:00:00.000Z'
    const backups = ['b', 'a', 'c'].map((id) => ({ id, createdAt: moment }))
    expect([...keptByPolicy(backups, { ...none, keepDaily: 1 }).keys()]).toEqual(['a'])
    expect([...keptByPolicy(backups.toReversed(), { ...none, keepDaily: 1 }).keys()]).toEqual(['a'])
  })

  it.each([
    ['2026-01-01T00:00:00.000Z', '2026-W01'],
    ['2026-01-04T23:59:59.999Z', '2026-W01'],
    ['2026-01-05T00:00:00.000Z', '2026-W02'],
    ['2025-12-29T00:00:00.000Z', '2026-W01'],
    ['2024-12-30T12:00:00.000Z', '2025-W01'],
    ['2021-01-03T12:00:00.000Z', '2020-W53'],
    ['2026-12-31T12:00:00.000Z', '2026-W53'],
  ])('puts %s in ISO week %s', (moment, week) => {
    expect(isoWeek(new Date(moment))).toBe(week)
  })
})
