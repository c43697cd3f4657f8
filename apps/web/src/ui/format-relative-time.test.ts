import { describe, expect, it } from 'vitest'
import { formatRelativeTime } from './format-relative-time'

describe('relative time', () => {
  const now = new Date('2025-06-15T12:00:00Z')
  const ago = (ms: number) => new Date(now.getTime() - ms)

  it.each([
    [10_000, 'just now'],
    [-5_000, 'just now'],
    [3 * 60_000, '3 min ago'],
    [59 * 60_000, '59 min ago'],
    [5 * 3_600_000, '5 h ago'],
    [2 * 86_400_000, '2 d ago'],
    [-14 * 60_000, 'in 14 min'],
    [-3 * 3_600_000, 'in 3 h'],
  ])('%i ms ago reads "%s"', (ms, text) => {
    expect(formatRelativeTime(ago(ms), now, 'en-GB')).toBe(text)
  })

  it('gives the date for anything a week old or more, with the year when it differs', () => {
    expect(formatRelativeTime(ago(10 * 86_400_000), now, 'en-GB')).toBe('5 Jun')
    expect(formatRelativeTime(new Date('2024-03-12T12:00:00Z'), now, 'en-GB')).toBe('12 Mar 2024')
  })
})
