import { describe, expect, it } from 'vitest'
import { isVerificationDue, nextVerificationDue } from './due.js'

const day = 24 * 60 * 60 * 1000
const last = '2026-11-20T13:05:00.000Z'
const at = (ms: number) => new Date(Date.parse(last) + ms)

describe('verification due rules', () => {
  it.each([
    // frequency, last check, ms after it, due
    ['off', null, 0, false],
    ['off', last, 400 * day, false],
    ['daily', null, 0, true],
    ['weekly', null, 0, true],
    ['monthly', null, 0, true],
    ['daily', last, day - 1, false],
    ['daily', last, day, true],
    ['weekly', last, day, false],
    ['weekly', last, 7 * day - 1, false],
    ['weekly', last, 7 * day, true],
    ['weekly', last, 8 * day, true],
    ['monthly', last, 29 * day, false],
    ['monthly', last, 30 * day - 1, false],
    ['monthly', last, 30 * day, true],
  ] as const)('%s, last check %s, %i ms later: due %s', (frequency, lastCheckedAt, after, due) => {
    expect(isVerificationDue(frequency, lastCheckedAt, at(after))).toBe(due)
  })

  it('names the next due time: a frequency after the last check, now when none ran, never when off', () => {
    const now = at(2 * day)
    expect(nextVerificationDue('daily', last, now)?.toISOString()).toBe('2026-11-21T13:05:00.000Z')
    expect(nextVerificationDue('weekly', last, now)?.toISOString()).toBe('2026-11-27T13:05:00.000Z')
    expect(nextVerificationDue('monthly', last, now)?.toISOString()).toBe('2026-12-20T13:05:00.000Z')
    expect(nextVerificationDue('weekly', null, now)).toEqual(now)
    expect(nextVerificationDue('off', last, now)).toBeNull()
    // Past due (the relay was off): the time it fell due, which the next cycle acts on.
    expect(nextVerificationDue('daily', last, at(3 * day))?.toISOString()).toBe('2026-11-21T13:05:00.000Z')
  })
})
