import type { BackupOperation } from '@relay/contracts'
import { useEffect, useRef } from 'react'
import styles from './BackupsPage.module.css'
import { formatBytes } from './format-bytes'
import { isFinished, kindStages, stageLabels } from './labels'
import type { BackupActivity } from './use-backup-activity'

/** The running backup, restore or verification with its progress, or how the last one ended; also a refused start. */
export function ActivityPanel({ activity }: { activity: BackupActivity }) {
  const { operation, progressError, backUp } = activity
  if (backUp.isError) {
    return (
      <div role="alert" className={styles.activityFailed} data-testid="backup-start-error">
        <div>
          <strong>The backup did not start</strong>
          <p>{backUp.error.message}</p>
        </div>
        <DismissButton onClick={activity.dismiss} />
      </div>
    )
  }
  if (progressError && !operation) {
    return (
      <div role="alert" className={styles.activityFailed} data-testid="backup-progress-error">
        <div>
          <strong>Lost track of the progress</strong>
          <p>{progressError.message}</p>
        </div>
        <DismissButton onClick={activity.dismiss} />
      </div>
    )
  }
  if (!operation) {
    return null
  }
  return <OperationProgress operation={operation} isStartedHere={activity.isStartedHere} onDismiss={activity.dismiss} />
}

const titles = {
  backup: { running: 'Backing up', done: 'Backup complete', failed: 'Backup failed', progress: 'Backup progress' },
  restore: {
    running: 'Restoring a backup',
    done: 'Backup restored',
    failed: 'Restore failed',
    progress: 'Restore progress',
  },
  verify: {
    running: 'Verifying a backup',
    done: 'Backup verified',
    failed: 'Verification failed',
    progress: 'Verification progress',
  },
} as const

function OperationProgress(props: { operation: BackupOperation; isStartedHere: boolean; onDismiss: () => void }) {
  const { operation } = props
  const ref = useRef<HTMLElement>(null)
  // The button that started it is now disabled, and a restore starts from far down the list: take the
  // focus (and the view) to the progress, once per operation.
  const focusedId = useRef<string | null>(null)
  useEffect(() => {
    if (props.isStartedHere && focusedId.current !== operation.id) {
      focusedId.current = operation.id
      ref.current?.focus()
    }
  }, [props.isStartedHere, operation.id])
  const finished = isFinished(operation)
  const state = operation.stage === 'done' ? 'done' : operation.stage === 'failed' ? 'failed' : 'running'
  const className =
    state === 'done' ? styles.activityDone : state === 'failed' ? styles.activityFailed : styles.activityRunning
  const scheduled = operation.kind === 'backup' && operation.trigger === 'scheduled'
  return (
    <section
      ref={ref}
      tabIndex={-1}
      className={className}
      aria-label={titles[operation.kind][state]}
      data-testid="backup-activity"
      data-kind={operation.kind}
      data-stage={operation.stage}
    >
      <div className={styles.activityBody}>
        <div className={styles.activityHeading}>
          <strong>
            {scheduled && state === 'running' ? 'Scheduled backup running' : titles[operation.kind][state]}
          </strong>
          {operation.filename && <code className={styles.code}>{operation.filename}</code>}
        </div>
        {!finished && <ProgressBar operation={operation} />}
        {state === 'done' && (
          <p role="status" className={styles.activityText} data-testid="activity-message">
            {operation.kind === 'backup' ? (
              'The backup is stored in Relay Cloud.'
            ) : operation.kind === 'verify' ? (
              'It can be restored: its checksums, every file in it and its database all check out.'
            ) : (
              <>
                The relay now runs on the restored database. The database it replaced is kept as a safety copy in the
                relay's data folder (<code>pre-restore</code>).
              </>
            )}
          </p>
        )}
        {state === 'failed' && (
          <p role="alert" className={styles.activityText} data-testid="activity-error">
            {operation.error ?? 'No reason was given.'}
            {operation.kind === 'restore' && ' Nothing was changed: the relay still runs on its own database.'}
          </p>
        )}
      </div>
      {finished && <DismissButton onClick={props.onDismiss} />}
    </section>
  )
}

/** Where the operation is among its steps, and the bytes of the current one when it counts them. */
function ProgressBar({ operation }: { operation: BackupOperation }) {
  const steps: readonly string[] = kindStages[operation.kind]
  const index = Math.max(0, steps.indexOf(operation.stage))
  const stageShare = operation.bytesTotal > 0 ? Math.min(1, operation.bytesDone / operation.bytesTotal) : 0
  // One bar over all steps, so it only ever moves forward; the text gives the current step's bytes.
  const percent = Math.round(((index + stageShare) / steps.length) * 100)
  const bytes =
    operation.bytesTotal > 0
      ? `${formatBytes(operation.bytesDone)} of ${formatBytes(operation.bytesTotal)}`
      : operation.bytesDone > 0
        ? formatBytes(operation.bytesDone)
        : ''
  const stepText = `Step ${index + 1} of ${steps.length}: ${stageLabels[operation.stage]}`
  return (
    <div className={styles.progress}>
      <p className={styles.progressText}>
        <span role="status" data-testid="activity-stage">
          {stepText}
        </span>
        {bytes && <span className={styles.progressBytes}>{bytes}</span>}
      </p>
      <div
        role="progressbar"
        aria-label={titles[operation.kind].progress}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
        aria-valuetext={bytes ? `${stepText}, ${bytes}` : stepText}
        className={styles.progressTrack}
      >
        <div className={styles.progressFill} style={{ width: `${Math.max(percent, 2)}%` }} />
      </div>
    </div>
  )
}

function DismissButton({ onClick }: { onClick: () => void }) {
  return (
    <button type="button" className={styles.dismiss} onClick={onClick} aria-label="Dismiss">
      ×
    </button>
  )
}
