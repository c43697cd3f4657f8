import { type BackupEncryptionStatus, backupPassphraseLimits } from '@relay/contracts'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { toast } from 'sonner'
import { api } from '../api'
import { Badge } from '../ui/Badge'
import common from '../ui/common.module.css'
import { InputField } from '../ui/Field'
import { FormAlert } from '../ui/FormAlert'
import form from '../ui/form.module.css'
import { Panel } from '../ui/Panel'
import { QueryStatus } from '../ui/QueryStatus'
import { RelativeTime } from '../ui/RelativeTime'
import styles from './EncryptionPanel.module.css'
import { encryptionKey, useBackupEncryption } from './use-backup-encryption'

export const lossWarning =
  'If you lose this passphrase, your encrypted backups cannot be restored by anyone, including us.'

type Draft = { passphrase: string; confirm: string }
type DraftErrors = Partial<Record<keyof Draft, string>>

const emptyDraft: Draft = { passphrase: '', confirm: '' }

/** What the relay would refuse, said before it is sent. Lengths count characters, as the relay does. */
function checkDraft({ passphrase, confirm }: Draft): DraftErrors {
  const length = [...passphrase].length
  const errors: DraftErrors = {}
  if (length < backupPassphraseLimits.minLength) {
    errors.passphrase = `Use at least ${backupPassphraseLimits.minLength} characters`
  } else if (length > backupPassphraseLimits.maxLength) {
    errors.passphrase = `Use at most ${backupPassphraseLimits.maxLength} characters`
  } else if (confirm !== passphrase) {
    errors.confirm = 'The two passphrases differ'
  }
  return errors
}

/**
 * Client-side encryption of backups: set, change or remove the passphrase. It stays on the relay, so
 * the page says plainly what losing it means.
 */
export function EncryptionPanel() {
  const encryption = useBackupEncryption()
  return (
    <Panel
      title="Encryption"
      description="The relay encrypts each backup before it goes to Relay Cloud. The passphrase never leaves the relay."
      className={styles.panel}
      testId="backup-encryption"
    >
      <QueryStatus
        query={encryption}
        loading="Reading the encryption setting…"
        failed="Could not read the encryption setting"
      />
      {encryption.data && <EncryptionSetting status={encryption.data} />}
    </Panel>
  )
}

function EncryptionSetting({ status }: { status: BackupEncryptionStatus }) {
  const queryClient = useQueryClient()
  const [isEditing, setEditing] = useState(false)
  const [isAskingRemove, setAskingRemove] = useState(false)
  const show = (reply: BackupEncryptionStatus) => queryClient.setQueryData(encryptionKey, reply)
  const remove = useMutation({
    mutationFn: () => api.removeBackupPassphrase(),
    onSuccess: (reply) => {
      show(reply)
      setAskingRemove(false)
      toast.success('Passphrase removed', { description: 'New backups are not encrypted.' })
    },
  })

  return (
    <div className={styles.body}>
      <p className={styles.state} data-testid="encryption-state" data-enabled={status.enabled}>
        <Badge tone={status.enabled ? 'ok' : 'muted'} small>
          {status.enabled ? 'On' : 'Off'}
        </Badge>
        {status.enabled ? (
          <span>
            New backups are encrypted with your passphrase, set{' '}
            {status.setAt ? <RelativeTime value={status.setAt} /> : 'earlier'}.
          </span>
        ) : (
          <span>New backups are sent unencrypted. Set a passphrase to encrypt them.</span>
        )}
      </p>

      {status.enabled && !isEditing && (
        <div className={common.actions}>
          <button type="button" className={common.secondary} onClick={() => setEditing(true)}>
            Change passphrase
          </button>
          {isAskingRemove ? (
            <span className={common.confirm}>
              <span className={common.confirmText}>New backups will not be encrypted.</span>
              <button
                type="button"
                className={common.dangerSolid}
                disabled={remove.isPending}
                onClick={() => remove.mutate()}
              >
                {remove.isPending ? 'Removing…' : 'Yes, remove it'}
              </button>
              <button type="button" className={common.smallButton} onClick={() => setAskingRemove(false)}>
                Cancel
              </button>
            </span>
          ) : (
            <button
              type="button"
              className={common.dangerSecondary}
              onClick={() => {
                remove.reset()
                setAskingRemove(true)
              }}
            >
              Remove passphrase
            </button>
          )}
        </div>
      )}
      {remove.isError && (
        <FormAlert title="The passphrase was not removed" messages={[remove.error.message]} testId="encryption-error" />
      )}
      {status.enabled && (
        <p className={`${common.note} ${common.smallNote}`}>
          Backups made before a change or removal keep the passphrase they were made with: restoring one asks for it.
        </p>
      )}

      {(!status.enabled || isEditing) && (
        <PassphraseForm
          isChange={status.enabled}
          onSaved={(reply) => {
            show(reply)
            setEditing(false)
          }}
          onCancel={status.enabled ? () => setEditing(false) : undefined}
        />
      )}
    </div>
  )
}

function PassphraseForm(props: {
  isChange: boolean
  onSaved: (reply: BackupEncryptionStatus) => void
  onCancel?: () => void
}) {
  const [draft, setDraft] = useState(emptyDraft)
  const [errors, setErrors] = useState<DraftErrors>({})
  const save = useMutation({
    mutationFn: (passphrase: string) => api.setBackupPassphrase(passphrase),
    onSuccess: (reply) => {
      setDraft(emptyDraft)
      props.onSaved(reply)
      toast.success(props.isChange ? 'Passphrase changed' : 'Passphrase set', {
        description: 'New backups are encrypted with it.',
      })
    },
  })

  const edit = (field: keyof Draft, value: string) => {
    setDraft((previous) => ({ ...previous, [field]: value }))
    setErrors((previous) => ({ ...previous, [field]: undefined }))
  }

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const found = checkDraft(draft)
    setErrors(found)
    if (Object.keys(found).length === 0) {
      save.mutate(draft.passphrase)
    }
  }

  return (
    <form
      className={form.form}
      noValidate
      onSubmit={submit}
      aria-label={props.isChange ? 'Change the backup passphrase' : 'Set a backup passphrase'}
    >
      <p className={`${common.warning} ${common.smallNote}`} data-testid="passphrase-warning">
        <strong>{lossWarning}</strong> Keep it somewhere safe, such as a password manager.
      </p>
      <div className={styles.fields}>
        <InputField
          label={props.isChange ? 'New passphrase' : 'Passphrase'}
          type="password"
          autoComplete="new-password"
          autoCapitalize="none"
          spellCheck={false}
          hint={`At least ${backupPassphraseLimits.minLength} characters. A few unrelated words are easy to type and hard to guess.`}
          value={draft.passphrase}
          error={errors.passphrase}
          errorTestId="passphrase-error"
          onChange={(value) => edit('passphrase', value)}
        />
        <InputField
          label="Confirm passphrase"
          type="password"
          autoComplete="new-password"
          autoCapitalize="none"
          spellCheck={false}
          value={draft.confirm}
          error={errors.confirm}
          errorTestId="confirm-error"
          onChange={(value) => edit('confirm', value)}
        />
      </div>
      {save.isError && (
        <FormAlert
          title={props.isChange ? 'The passphrase was not changed' : 'The passphrase was not set'}
          messages={[save.error.message]}
          testId="encryption-error"
        />
      )}
      <div className={common.actions}>
        <button type="submit" className={common.primary} disabled={save.isPending}>
          {save.isPending ? 'Saving…' : props.isChange ? 'Change passphrase' : 'Set passphrase'}
        </button>
        {props.onCancel && (
          <button type="button" className={common.secondary} onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  )
}
