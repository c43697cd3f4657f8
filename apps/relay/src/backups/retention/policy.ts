import type { KeepPolicy, KeepRule } from '@relay/contracts'

export type DatedBackup = { id: string; createdAt: string }

/** The calendar bucket of a moment for each rule, in UTC; `keepLast` puts every backup in one of its own. */
const bucketOf: Record<KeepRule, (at: Date, id: string) => string> = {
  keepLast: (_at, id) => id,
  keepDaily: (at) => at.toISOString().slice(0, 10),
  keepWeekly: isoWeek,
  keepMonthly: (at) => at.toISOString().slice(0, 7),
}

/** `2026-W02`: the ISO year and week, whose weeks start on Monday and whose first week holds a Thursday. */
export function isoWeek(at: Date): string {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
  // The Thursday of the same week decides the year the week belongs to.
  day.setUTCDate(day.getUTCDate() + 3 - ((day.getUTCDay() + 6) % 7))
  const year = day.getUTCFullYear()
  const week = Math.floor((day.getTime() - Date.UTC(year, 0, 1)) / 86_400_000 / 7) + 1
  return `${year}-W${String(week).padStart(2, '0')}`
}

/** Newest first; the id orders backups of the same moment, so every caller sees one order. */
export function newestFirst<T extends DatedBackup>(backups: readonly T[]): T[] {
  return [...backups].sort(
    (a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  )
}

/**
 * Which of a relay's completed backups the policy keeps, each with the rules that keep it (restic's
 * `forget`): walking from the newest, a rule keeps the first backup of each new bucket until it has
 * kept its count. A policy with any count above zero keeps the newest backup.
 */
export function keptByPolicy(backups: readonly DatedBackup[], policy: KeepPolicy): Map<string, KeepRule[]> {
  const kept = new Map<string, KeepRule[]>()
  const rules = (Object.keys(bucketOf) as KeepRule[]).filter((rule) => policy[rule] > 0)
  const lastBucket = new Map<KeepRule, string>()
  const keptCount = new Map<KeepRule, number>()
  for (const backup of newestFirst(backups)) {
    const at = new Date(backup.createdAt)
    for (const rule of rules) {
      const bucket = bucketOf[rule](at, backup.id)
      const count = keptCount.get(rule) ?? 0
      if (bucket !== lastBucket.get(rule) && count < policy[rule]) {
        lastBucket.set(rule, bucket)
        keptCount.set(rule, count + 1)
        kept.set(backup.id, [...(kept.get(backup.id) ?? []), rule])
      }
    }
  }
  return kept
}
