const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/**
 * "just now", "3 min ago", "5 h ago", "2 d ago", or ahead "in 14 min"; a week or more away, the date
 * ("12 Mar", "12 Mar 2024").
 */
export function formatRelativeTime(date: Date, now: Date, locale?: string): string {
  const elapsed = now.getTime() - date.getTime()
  const distance = Math.abs(elapsed)
  // A little clock skew between relay and browser must not print "in 2 s".
  if (distance < 45_000) {
    return 'just now'
  }
  const span = spanOf(distance)
  if (span) {
    return elapsed > 0 ? `${span} ago` : `in ${span}`
  }
  const sameYear = date.getFullYear() === now.getFullYear()
  return date.toLocaleDateString(locale, { day: 'numeric', month: 'short', year: sameYear ? undefined : 'numeric' })
}

function spanOf(distance: number): string | undefined {
  if (distance < HOUR) {
    return `${Math.max(1, Math.round(distance / MINUTE))} min`
  }
  if (distance < DAY) {
    return `${Math.floor(distance / HOUR)} h`
  }
  if (distance < 7 * DAY) {
    return `${Math.floor(distance / DAY)} d`
  }
  return undefined
}
