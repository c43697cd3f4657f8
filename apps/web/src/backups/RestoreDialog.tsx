import { type BackupRecord, isEncryptedBackupName, type RestoreBody } from '@relay/contracts'
import { type FormEvent, useEffect, useId, useRef, useState } from 'react'
import common from '../ui/common.module.css'
import { InputField } from '../ui/Field'
import form from '../ui/form.module.css'
import { RelativeTime } from '../ui/RelativeTime'
import styles from './BackupsPage.module.css'
import { EncryptedBadge } from './EncryptedBadge'
import { formatBytes } from './format-bytes'
import { type Component, componentLabels, components } from './labels'
import { CheckField } from './SettingsFields'
import type { BackupActivity } from './use-backup-activity'
import { useBackupEncryption } from './use-backup-encryption'

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
  const [choice, setChoice] = useState<Required<Omit<RestoreBody, 'passphrase'>>>({
    includeKeys: true,
    includeIdentity: true,
    includeFrameEngine: true,
  })
  const isEncrypted = isEncryptedBackupName(backup.filename)
  // Unknown (still loading, or unreadable) counts as none: the field is then required, never skipped.
  const relayHasPassphrase = useBackupEncryption().data?.enabled === true
  const [passphrase, setPassphrase] = useState('')
  const [passphraseError, setPassphraseError] = useState<string | undefined>()
  const created = new Date(backup.createdAt)

  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (isEncrypted && passphrase === '' && !relayHasPassphrase) {
      setPassphraseError('Enter the passphrase this backup was made with')
      return
    }
    const body: RestoreBody = passphrase === '' ? choice : { ...choice, passphrase }
    restore.mutate({ backupId: backup.id, body }, { onSuccess: props.onClose })
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
            {isEncrypted && <EncryptedBadge />}
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
        {isEncrypted && (
          <InputField
            label="Backup passphrase"
            type="password"
            autoComplete="current-password"
            autoCapitalize="none"
            spellCheck={false}
            hint={
              relayHasPassphrase
                ? "This backup is encrypted. Leave empty to use this relay's passphrase, or enter the one the backup was made with."
                : 'This backup is encrypted, and this relay has no passphrase set: enter the one the backup was made with.'
            }
            value={passphrase}
            error={passphraseError}
            errorTestId="restore-passphrase-error"
            onChange={(value) => {
              setPassphrase(value)
              setPassphraseError(undefined)
            }}
          />
        )}
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
