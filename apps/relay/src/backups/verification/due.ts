import { backupDueAfter, type VerificationFrequency } from '@relay/contracts'
import { isBackupDue } from '../scheduler.js'

/** Due when verification is on and nothing was checked yet, or the last check is at least a frequency old. */
export function isVerificationDue(frequency: VerificationFrequency, lastCheckedAt: string | null, now: Date): boolean {
  return frequency !== 'off' && isBackupDue(lastCheckedAt, frequency, now)
}

/** When the next check falls due: at once when none ran yet, never (null) when verification is off. */
export function nextVerificationDue(
  frequency: VerificationFrequency,
  lastCheckedAt: string | null,
  now: Date,
): Date | null {
  if (frequency === 'off') {
    return null
  }
  return lastCheckedAt === null ? now : new Date(Date.parse(lastCheckedAt) + backupDueAfter[frequency])
}
