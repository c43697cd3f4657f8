import type { Clock } from '@relay/server-kit'
import type { RelayDB } from '../db/schema.js'

/**
 * Tables whose changes alone are not worth a new backup: the relay's notes about itself, which expire
 * or which a restore keeps from the present rather than bringing back; and SQLite's AUTOINCREMENT
 * counters, which move with them (any other table they count changes its own pages too).
 */
export const volatileTables = [
  ...([
    'notifications',
    'unfinished_operations',
    'cloud_sessions',
    'frontend_sessions',
    'backup_verifications',
  ] as const satisfies readonly (keyof RelayDB)[]),
  'sqlite_sequence',
]

/**
 * What the newest backup this relay uploaded holds (a content fingerprint, and when the passphrase in
 * force was set, or null), and when a scheduled backup last found nothing new since.
 */
export type LastContent = {
  fingerprint: string
  passphraseSetAt: string | null
  backupId: string
  unchangedAt: string | null
}

/**
 * The content of the last uploaded backup, so a scheduled backup that would store the same again is
 * skipped. Kept in memory: a write to the database would itself be a change, and after a restart the
 * first scheduled backup simply runs.
 */
export function createLastContent(clock: Clock) {
  let last: LastContent | undefined
  return {
    get: (): LastContent | undefined => last,
    uploaded(content: Omit<LastContent, 'unchangedAt'>): void {
      last = { ...content, unchangedAt: null }
    },
    unchanged(): void {
      if (last) {
        last.unchangedAt = clock.now().toISOString()
      }
    },
  }
}
