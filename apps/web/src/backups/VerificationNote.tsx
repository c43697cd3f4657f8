import type { BackupVerificationMark } from '@relay/contracts'
import common from '../ui/common.module.css'
import { RelativeTime } from '../ui/RelativeTime'
import styles from './verification.module.css'

/** What the relay found when it last verified a backup, in one line of its row. */
export function VerificationNote({ verification }: { verification: BackupVerificationMark | null }) {
  if (!verification) {
    return (
      <span className={`${common.sub} ${styles.note}`} data-testid="backup-verification" data-outcome="none">
        Not verified yet
      </span>
    )
  }
  if (verification.outcome === 'ok') {
    return (
      <span className={`${common.sub} ${styles.note}`} data-testid="backup-verification" data-outcome="ok">
        Verified <RelativeTime value={verification.checkedAt} />
      </span>
    )
  }
  return (
    <span
      className={`${common.sub} ${styles.note} ${styles.failed}`}
      data-testid="backup-verification"
      data-outcome="failed"
    >
      Verification failed: {verification.error ?? 'no reason was given'}
    </span>
  )
}
