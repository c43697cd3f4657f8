import type { LicenseSource } from '@relay/contracts'

/** Whether a user holds a license, and where it comes from. */
export type License = { valid: boolean; source: LicenseSource | null }
