import type { Silence } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../api'
import {
  acknowledgedText,
  alertFailure,
  areaOfItem,
  areaSilence,
  durationLabel,
  markTime,
  optionalText,
  silenceCovering,
  silencedText,
  textProblem,
} from './health-alerts'

const collector = 'collector:0b0b0b0b-0000-4000-8000-000000000001'
const other = 'collector:0b0b0b0b-0000-4000-8000-000000000002'

function silence(id: string, target: Silence['target']): Silence {
  return { id, target, createdAt: '2026-01-01T10:00:00.000Z', until: '2026-01-01T11:00:00.000Z', reason: null }
}

describe('areaOfItem', () => {
  it('names the area of each kind of item', () => {
    expect(areaOfItem(collector)).toBe('Collectors')
    expect(areaOfItem('stream:x')).toBe('Streams')
    expect(areaOfItem('junction:x')).toBe('Junctions')
    expect(areaOfItem('sensor:x')).toBeUndefined()
    expect(areaOfItem('constructor:x')).toBeUndefined()
  })
})

describe('silenceCovering', () => {
  const areaWide = silence('area', { area: 'Collectors' })
  const own = silence('own', { item: collector })

  it('prefers the item’s own silence over its area’s', () => {
    expect(silenceCovering([areaWide, own], collector)?.id).toBe('own')
  })

  it('falls back to the silence of the item’s area', () => {
    expect(silenceCovering([areaWide, own], other)?.id).toBe('area')
    expect(silenceCovering([own], 'stream:x')).toBeUndefined()
  })

  it('finds an area’s own silence only', () => {
    expect(areaSilence([own, areaWide], 'Collectors')?.id).toBe('area')
    expect(areaSilence([own], 'Collectors')).toBeUndefined()
  })
})

describe('durationLabel', () => {
  it('says each preset in its largest whole unit', () => {
    expect([5, 15, 60, 240, 1440, 10080].map(durationLabel)).toEqual([
      '5 minutes',
      '15 minutes',
      '1 hour',
      '4 hours',
      '1 day',
      '7 days',
    ])
    expect(durationLabel(90)).toBe('90 minutes')
  })
})

describe('texts', () => {
  it('accepts up to 500 characters and explains a longer one', () => {
    expect(textProblem('x'.repeat(500), 'note')).toBeUndefined()
    expect(textProblem('x'.repeat(501), 'reason')).toBe('The reason is 501 characters long; keep it to 500 or fewer.')
  })

  it('leaves blank text out', () => {
    expect(optionalText('   ')).toBeUndefined()
    expect(optionalText(' broker restart ')).toBe('broker restart')
  })
})

describe('alertFailure', () => {
  it('explains a warning that cleared before it was acknowledged', () => {
    expect(alertFailure(new ApiError('CONFLICT', 'No current warning', 409), 'acknowledge')).toMatch(/has cleared/)
  })

  it('explains a lost connection and ends other messages as sentences', () => {
    expect(alertFailure(new ApiError('UNAVAILABLE', 'Network error', 0), 'silence')).toMatch(/could not be reached/)
    expect(alertFailure(new Error('Something broke'), 'silence')).toBe('Something broke.')
  })
})

describe('mark texts', () => {
  const time = (value: string) => value.slice(11, 16)

  it('reads the acknowledgement with its note, and without one', () => {
    expect(acknowledgedText({ at: '2026-01-01T10:05:00.000Z', note: 'on it' }, time)).toBe('Acknowledged 10:05 — on it')
    expect(acknowledgedText({ at: '2026-01-01T10:05:00.000Z', note: null }, time)).toBe('Acknowledged 10:05')
  })

  it('reads the silence with its end and reason', () => {
    expect(silencedText({ until: '2026-01-01T11:00:00.000Z', reason: 'maintenance' }, time)).toBe(
      'Silenced until 11:00 — maintenance',
    )
  })

  it('adds the day to a time that is not today', () => {
    const now = new Date(2026, 0, 1, 12, 0)
    expect(markTime(new Date(2026, 0, 1, 9, 30).toISOString(), now)).not.toMatch(/Jan/)
    expect(markTime(new Date(2026, 0, 3, 9, 30).toISOString(), now)).toMatch(/Jan/)
  })
})
