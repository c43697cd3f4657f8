const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** "just now", "3 min ago", "5 h ago", "2 d ago"; a week or more back, the date ("12 Mar", "12 Mar 2024"). */
export function formatRelativeTime(date: Date, now: Date, locale?: string): string {
  const elapsed = now.getTime() - date.getTime()
  // A little clock skew between relay and browser must not print "in 2 s".
  if (elapsed < 45_000) {
    return 'just now'
  }
  if (elapsed < HOUR) {
    return `${Math.max(1, Math.round(elapsed / MINUTE))} min ago`
  }
  if (elapsed < DAY) {
    return `${Math.floor(elapsed / HOUR)} h ago`
  }
  if (elapsed < 7 * DAY) {
    return `${Math.floor(elapsed / DAY)} d ago`
  }
  const sameYear = date.getFullYear() === now.getFullYear()
  return date.toLocaleDateString(locale, { day: 'numeric', month: 'short', year: sameYear ? undefined : 'numeric' })
}
