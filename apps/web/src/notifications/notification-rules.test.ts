import { featureFlagDefaults } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { displayDuration, isCategoryShown } from './notification-rules'

describe('notification rules', () => {
  const flags = { ...featureFlagDefaults, notifications_duration_success: 3000, notifications_duration_error: 9000 }

  it("uses the notification's own duration first", () => {
    expect(displayDuration({ type: 'error', duration: 1500 }, flags)).toBe(1500)
  })

  it('uses the duration flags for success and error, and the type defaults otherwise', () => {
    expect(displayDuration({ type: 'success', duration: null }, flags)).toBe(3000)
    expect(displayDuration({ type: 'error', duration: null }, flags)).toBe(9000)
    expect(displayDuration({ type: 'warning', duration: null }, flags)).toBe(7000)
    expect(displayDuration({ type: 'info', duration: null }, flags)).toBe(6000)
  })

  it('shows a category only while its flag is on', () => {
    const off = { ...featureFlagDefaults, notifications_cloud_sync: false }
    expect(isCategoryShown('cloud', off)).toBe(false)
    expect(isCategoryShown('system', off)).toBe(true)
  })
})
