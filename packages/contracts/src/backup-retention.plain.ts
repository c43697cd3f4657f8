import { endpoint } from './endpoint.js'

/**
 * The keep policy of a relay's cloud backups, with restic's `forget` semantics: `keepLast` keeps the
 * N newest completed backups; `keepDaily`, `keepWeekly` and `keepMonthly` keep the newest of each of
 * the last N UTC days, ISO weeks and months that have one. A backup kept by any rule is kept.
 */
export const keepRules = ['keepLast', 'keepDaily', 'keepWeekly', 'keepMonthly'] as const
export type KeepRule = (typeof keepRules)[number]

/** Each count's inclusive range; together they must keep at least one backup. */
export const keepCountRange = { min: 0, max: 100 } as const

export const defaultKeepPolicy = {
  keepLast: 3,
  keepDaily: 7,
  keepWeekly: 4,
  keepMonthly: 6,
} as const satisfies Record<KeepRule, number>

export const keepNothingMessage = 'The keep policy must keep at least one backup: set one of the counts to 1 or more'

/** The relay's keep policy, and how many backups of this relay fit in the account's quota. */
export const backupRetentionUrls = {
  getRetention: endpoint('GET', '/api/cloud-backups/retention'),
  updateRetention: endpoint('PUT', '/api/cloud-backups/retention'),
}
