import { describe, expect, it } from 'vitest'
import { createSkipLog, isBackupDue } from './scheduler.js'

const day = 24 * 60 * 60 * 1000
const last = '2026-03-01T10:00:00.000Z'
const at = (ms: number) => new Date(Date.parse(last) + ms)

describe('backup due rules', () => {
  it('is due at once when there was never a backup', () => {
    expect(isBackupDue(null, 'monthly', new Date(last))).toBe(true)
  })

  it.each([
    ['daily', 1],
    ['weekly', 7],
    ['monthly', 30],
  ] as const)('%s: due from exactly %i days after the last backup, not a millisecond before', (frequency, days) => {
    expect(isBackupDue(last, frequency, at(days * day - 1))).toBe(false)
    expect(isBackupDue(last, frequency, at(days * day))).toBe(true)
    expect(isBackupDue(last, frequency, at(days * day + 1))).toBe(true)
  })
})

describe('skip log', () => {
  it('logs a reason when it first occurs, again only after it changed or a backup ran', () => {
    const lines: string[] = []
    const skips = createSkipLog({ info: (_obj, msg) => lines.push(msg) })
    skips.skipped('no-license')
    skips.skipped('no-license')
    skips.skipped('disabled')
    skips.skipped('disabled')
    skips.ran()
    skips.skipped('disabled')
    expect(lines).toEqual([
      'scheduled backup skipped: the cloud account has no valid Pro license',
      'scheduled backup skipped: automatic backups are turned off',
      'scheduled backup skipped: automatic backups are turned off',
    ])
  })
})
