import type { BackupRecord, RestoreBody } from '@relay/contracts'
import { type FormEvent, useEffect, useId, useRef, useState } from 'react'
import common from '../ui/common.module.css'
import form from '../ui/form.module.css'
import { RelativeTime } from '../ui/RelativeTime'
import styles from './BackupsPage.module.css'
import { formatBytes } from './format-bytes'
import { type Component, componentLabels, components } from './labels'
import { CheckField } from './SettingsFields'
import type { BackupActivity } from './use-backup-activity'

const componentNotes = {
  includeKeys: "Replaces this relay's encryption key with the one in the backup.",
  includeIdentity: "Replaces this relay's backend ID; takes effect when the relay restarts.",
  includeFrameEngine: "Replaces the frame engine's files.",
} as const satisfies Record<Component, string>

/** A modal that says what a restore does before it starts, and lets the user leave parts of the backup out. */
export function RestoreDialog(props: { backup: BackupRecord | null; activity: BackupActivity; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  const textId = useId()

  useEffect(() => {
    const dialog = ref.current
    if (!dialog) {
      return
    }
    if (props.backup && !dialog.open) {
      dialog.showModal()
      // Focus starts on the safe choice, not on the first checkbox.
      dialog.querySelector<HTMLElement>('[data-initial-focus]')?.focus()
    } else if (!props.backup && dialog.open) {
      dialog.close()
    }
  }, [props.backup])

  return (
    <dialog
      ref={ref}
      className={styles.dialog}
      aria-labelledby={titleId}
      aria-describedby={textId}
      onClose={props.onClose}
      data-testid="restore-dialog"
    >
      {props.backup && (
        <RestoreForm
          key={props.backup.id}
          backup={props.backup}
          activity={props.activity}
          titleId={titleId}
          textId={textId}
          onClose={props.onClose}
        />
      )}
    </dialog>
  )
}

function RestoreForm(props: {
  backup: BackupRecord
  activity: BackupActivity
  titleId: string
  textId: string
  onClose: () => void
}) {
  const { backup, activity } = props
  const { restore } = activity
  const [choice, setChoice] = useState<Required<RestoreBody>>({
    includeKeys: true,
    includeIdentity: true,
    includeFrameEngine: true,
  })
  const created = new Date(backup.createdAt)

  const submit = (event: FormEvent) => {
    event.preventDefault()
    restore.mutate({ backupId: backup.id, body: choice }, { onSuccess: props.onClose })
  }

  return (
    <form className={styles.dialogForm} onSubmit={submit}>
      <header className={styles.dialogHeader}>
        <h2 id={props.titleId}>Restore this backup?</h2>
        <p className={styles.dialogBackup}>
          <code className={styles.code}>{backup.filename}</code>
          <span className={common.sub}>
            Made {created.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })} (
            <RelativeTime value={backup.createdAt} />) · {formatBytes(backup.compressedSize)}
          </span>
        </p>
      </header>
      <div className={styles.dialogBody}>
        <div id={props.textId} className={styles.dialogText}>
          <p className={`${common.warning} ${common.smallNote}`}>
            <strong>The relay's current database is replaced by the one in this backup.</strong> Collectors, streams,
            junctions, notifications and settings go back to how they were when the backup was made; changes made since
            then are undone.
          </p>
          <ul className={styles.steps}>
            <li>The relay first downloads the backup and checks it. If anything is wrong, nothing changes.</li>
            <li>
              Before replacing anything, it keeps a safety copy of the current database in its data folder (
              <code>pre-restore</code>).
            </li>
            <li>The relay stays connected to Relay Cloud, and you stay signed in.</li>
          </ul>
        </div>
        <fieldset className={styles.choices}>
          <legend className={form.legend}>Also restore, when the backup holds them</legend>
          {components.map((component) => (
            <CheckField
              key={component}
              label={componentLabels[component]}
              checked={choice[component]}
              onChange={(checked) => setChoice((previous) => ({ ...previous, [component]: checked }))}
            >
              {componentNotes[component]}
            </CheckField>
          ))}
        </fieldset>
        {restore.isError && (
          <div role="alert" className={common.alert} data-testid="restore-error">
            <strong>The restore did not start</strong>
            <p>{restore.error.message}</p>
          </div>
        )}
      </div>
      <div className={styles.dialogActions}>
        <button type="button" className={styles.secondary} onClick={props.onClose} data-initial-focus>
          Cancel
        </button>
        <button type="submit" className={styles.dangerPrimary} disabled={restore.isPending}>
          {restore.isPending ? 'Starting…' : 'Restore and replace the database'}
        </button>
      </div>
    </form>
  )
}
