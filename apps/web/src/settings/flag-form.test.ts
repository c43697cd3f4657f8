import { featureFlagDefaults } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { diffDraft, fieldErrors, parseNumber, rangeOf, toDraft } from './flag-form'

describe('settings form', () => {
  it('shows durations in seconds and counts as they are', () => {
    const draft = toDraft({ ...featureFlagDefaults, notifications_duration_success: 1500 })
    expect(draft.notifications_polling_interval).toBe('15')
    expect(draft.notifications_duration_success).toBe('1.5')
    expect(draft.notifications_max_concurrent).toBe('5')
    expect(draft.notifications_enabled).toBe(true)
  })

  it('turns typed seconds back into whole milliseconds', () => {
    expect(parseNumber('notifications_polling_interval', ' 2.5 ')).toBe(2500)
    expect(parseNumber('notifications_duration_error', '0.0004')).toBe(0)
    expect(parseNumber('notifications_max_concurrent', '3')).toBe(3)
    expect(parseNumber('notifications_max_concurrent', '')).toBeUndefined()
    expect(parseNumber('notifications_max_concurrent', 'abc')).toBeUndefined()
  })

  it('reads the allowed range from the contract, in the field unit', () => {
    expect(rangeOf('notifications_polling_interval')).toEqual({ min: 1, max: 600 })
    expect(rangeOf('notifications_max_concurrent')).toEqual({ min: 1, max: 20 })
  })

  it('sends only the flags that changed, and holds back fields that are not numbers', () => {
    const draft = { ...toDraft(featureFlagDefaults), notifications_system: false, notifications_max_concurrent: '5' }
    expect(diffDraft(draft, featureFlagDefaults)).toEqual({ update: { notifications_system: false }, errors: {} })
    const broken = { ...draft, notifications_duration_error: '' }
    expect(diffDraft(broken, featureFlagDefaults).errors).toEqual({ notifications_duration_error: 'Enter a number' })
  })

  it("puts the relay's messages on their fields, in seconds where the field is in seconds", () => {
    const { fields, form } = fieldErrors([
      { path: 'body/notifications_polling_interval', message: 'must be >= 1000' },
      { path: 'body/notifications_max_concurrent', message: 'must be <= 20' },
      { path: 'body', message: 'must NOT have additional properties' },
    ])
    expect(fields).toEqual({
      notifications_polling_interval: 'must be >= 1 s',
      notifications_max_concurrent: 'must be <= 20',
    })
    expect(form).toEqual(['must NOT have additional properties'])
  })
})
