import { backupLimits } from '@relay/contracts'

export const retentionRange = backupLimits.retentionDays

export const retentionMessage = `Enter a whole number of days from ${retentionRange.min} to ${retentionRange.max}`

/** The typed retention as days, or the message to show beside the field when it is not a whole number in range. */
export function parseRetention(text: string): { days: number } | { error: string } {
  const trimmed = text.trim()
  if (!/^\d+$/.test(trimmed)) {
    return { error: retentionMessage }
  }
  const days = Number(trimmed)
  if (days < retentionRange.min || days > retentionRange.max) {
    return { error: retentionMessage }
  }
  return { days }
}
