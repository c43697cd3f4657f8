import { type BackupFrequency, backupDueAfter } from '@relay/contracts'

/**
 * Due when there was never a backup, or the last one (or the last check that found nothing changed
 * since it) is at least a day / week / 30 days old.
 */
export function isBackupDue(
  lastBackup: string | null,
  frequency: BackupFrequency,
  now: Date,
  unchangedAt: string | null = null,
): boolean {
  const last = Math.max(lastBackup ? Date.parse(lastBackup) : 0, unchangedAt ? Date.parse(unchangedAt) : 0)
  return last === 0 || now.getTime() - last >= backupDueAfter[frequency]
}

export type SkipReason =
  | 'busy'
  | 'no-session'
  | 'cloud-unreachable'
  | 'no-license'
  | 'disabled'
  | 'not-due'
  | 'unchanged'

export const skipMessages = {
  busy: 'another backup or restore is running',
  'no-session': 'the relay is not signed in to the cloud',
  'cloud-unreachable': 'the cloud could not be reached',
  'no-license': 'the cloud account has no valid Pro license',
  disabled: 'automatic backups are turned off',
  'not-due': 'no backup is due yet',
  unchanged: 'nothing changed since the last backup, which is still stored',
} as const satisfies Record<SkipReason, string>

/** Logs why a cycle skipped only when the reason changes, so a relay that stays unlicensed logs it once. */
export function createSkipLog(log: { info(obj: object, msg: string): void }) {
  let last: SkipReason | undefined
  return {
    skipped(reason: SkipReason, detail?: object) {
      if (reason !== last) {
        log.info({ reason, ...detail }, `scheduled backup skipped: ${skipMessages[reason]}`)
        last = reason
      }
    },
    ran() {
      last = undefined
    },
  }
}
