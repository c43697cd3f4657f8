import {
  type BackupFrequency,
  type BackupSettings,
  type BackupSettingsChange,
  type BackupStatusReply,
  backupFrequencies,
  backupSchedule,
} from '@relay/contracts'
import { useIsMutating, useMutation, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, type ReactNode, useId, useState } from 'react'
import { ApiError, api } from '../api'
import { SwitchField } from '../ui/SwitchField'
import styles from './BackupsPage.module.css'
import { type Component, componentLabels, frequencyHints, frequencyLabels } from './labels'
import { backupKeys } from './queries'
import { parseRetention, retentionRange } from './retention'

const saveKey = [...backupKeys.all, 'save-settings']

type Outcome = 'idle' | 'saved' | 'failed'

/** Sends only what changed, and drops the edits a reply settled so the saved value shows again. */
function withoutSent(edits: BackupSettingsChange, sent: BackupSettingsChange): BackupSettingsChange {
  const left: Record<string, unknown> = { ...edits }
  for (const [field, value] of Object.entries(sent)) {
    if (left[field] === value) {
      delete left[field]
    }
  }
  return left as BackupSettingsChange
}

/** The backup settings, saved as each one changes; they live in Relay Cloud and apply to every relay of the account. */
export function SettingsPanel({ settings }: { settings: BackupSettings }) {
  const queryClient = useQueryClient()
  const headingId = useId()
  const [edits, setEdits] = useState<BackupSettingsChange>({})
  const [retentionText, setRetentionText] = useState<string | null>(null)
  const [retentionError, setRetentionError] = useState<string | null>(null)
  const [formError, setFormError] = useState<string | null>(null)
  const [outcome, setOutcome] = useState<Outcome>('idle')
  const savingCount = useIsMutating({ mutationKey: saveKey })

  const save = useMutation({
    mutationKey: saveKey,
    mutationFn: (change: BackupSettingsChange) => api.saveBackupSettings(change),
    onMutate: () => {
      setFormError(null)
      setOutcome('idle')
    },
    onSuccess: async (reply, sent) => {
      queryClient.setQueryData<BackupStatusReply>(backupKeys.status, (old) =>
        old ? { ...old, settings: reply.settings } : old,
      )
      setEdits((previous) => withoutSent(previous, sent))
      if (sent.retentionDays !== undefined) {
        setRetentionText((text) => (text !== null && Number(text) === sent.retentionDays ? null : text))
      }
      setOutcome('saved')
      await queryClient.invalidateQueries({ queryKey: backupKeys.status })
    },
    onError: (error, sent) => {
      setEdits((previous) => withoutSent(previous, sent))
      setOutcome('failed')
      const retentionDetail =
        error instanceof ApiError ? error.details.find((detail) => detail.path.endsWith('retentionDays')) : undefined
      if (retentionDetail) {
        setRetentionError(`Not saved: ${retentionDetail.message}`)
      } else {
        setFormError(error.message)
      }
    },
  })

  const change = (update: BackupSettingsChange) => {
    setEdits((previous) => ({ ...previous, ...update }))
    save.mutate(update)
  }

  const shown = { ...settings, ...edits }
  const retentionValue = retentionText ?? String(shown.retentionDays)

  const commitRetention = () => {
    if (retentionText === null) {
      return
    }
    const parsed = parseRetention(retentionText)
    if ('error' in parsed) {
      setRetentionError(parsed.error)
      return
    }
    setRetentionError(null)
    if (parsed.days === shown.retentionDays) {
      setRetentionText(null)
      return
    }
    change({ retentionDays: parsed.days })
  }

  const editRetention = (text: string) => {
    setRetentionText(text)
    // Once a message shows, it follows the typing, so it goes as soon as the value is right.
    if (retentionError !== null) {
      const parsed = parseRetention(text)
      setRetentionError('error' in parsed ? parsed.error : null)
    }
  }

  const submit = (event: FormEvent) => {
    event.preventDefault()
    commitRetention()
  }

  const checkMinutes = backupSchedule.checkInterval / 60_000

  return (
    <section className={styles.panel} aria-labelledby={headingId} data-testid="backup-settings">
      <header className={styles.panelHeader}>
        <h2 id={headingId}>Settings</h2>
        <p className={styles.mutedText}>Kept in Relay Cloud; they apply to every relay of your account.</p>
      </header>
      <form noValidate onSubmit={submit} className={styles.form}>
        <div className={styles.group}>
          <SwitchField
            styles={styles}
            label="Back up automatically"
            checked={shown.enabled}
            onChange={(enabled) => change({ enabled })}
          >
            Every {checkMinutes} minutes the relay checks whether a backup is due, and makes one when it is.
          </SwitchField>
          <FrequencyField value={shown.frequency} onChange={(frequency) => change({ frequency })} />
          <RetentionField
            value={retentionValue}
            error={retentionError}
            onChange={editRetention}
            onCommit={commitRetention}
          />
        </div>

        <fieldset className={styles.group}>
          <legend>Included in each backup</legend>
          <CheckField label="Database" checked disabled>
            Collectors, streams, junctions, notifications and settings. Always included.
          </CheckField>
          <CheckField
            label={componentLabels.includeKeys}
            checked={shown.includeKeys}
            onChange={(includeKeys) => change({ includeKeys })}
            testId="include-keys"
          >
            The key this relay encrypts its stored passwords and tokens with.
          </CheckField>
          <KeysNote included={shown.includeKeys} />
          <ComponentField component="includeIdentity" checked={shown.includeIdentity} onChange={change}>
            This relay's backend ID, so a relay restored on a new machine keeps its place in Relay Cloud.
          </ComponentField>
          <ComponentField component="includeFrameEngine" checked={shown.includeFrameEngine} onChange={change}>
            The frame engine's files in the relay's data folder.
          </ComponentField>
        </fieldset>

        {formError && (
          <div role="alert" className={styles.formAlert} data-testid="settings-error">
            <strong>Not saved</strong>
            <p>{formError}</p>
          </div>
        )}
        <p
          role="status"
          className={outcome === 'failed' && savingCount === 0 ? styles.statusBad : styles.status}
          data-testid="settings-status"
          data-state={savingCount > 0 ? 'saving' : outcome}
        >
          {savingCount > 0
            ? 'Saving…'
            : outcome === 'saved'
              ? 'All changes saved'
              : outcome === 'failed'
                ? 'The last change was not saved'
                : 'Each change is saved as you make it.'}
        </p>
      </form>
    </section>
  )
}

/** Says plainly what including the keys means; it is the one choice that changes who can read the secrets. */
function KeysNote({ included }: { included: boolean }) {
  return included ? (
    <p className={styles.warning} data-testid="keys-note">
      With the keys in the backup, anyone who holds the backup file can decrypt the passwords and tokens stored in this
      relay. Keep downloaded backups as safe as the relay itself.
    </p>
  ) : (
    <p className={styles.note} data-testid="keys-note">
      Without the keys, stored passwords and tokens are only ciphertext in the backup: nobody can read them from it.
      Restoring onto another machine then needs this relay's key too.
    </p>
  )
}

function ComponentField(props: {
  component: Exclude<Component, 'includeKeys'>
  checked: boolean
  onChange: (change: BackupSettingsChange) => void
  children: ReactNode
}) {
  return (
    <CheckField
      label={componentLabels[props.component]}
      checked={props.checked}
      onChange={(checked) => props.onChange({ [props.component]: checked })}
      testId={props.component === 'includeIdentity' ? 'include-identity' : 'include-frame-engine'}
    >
      {props.children}
    </CheckField>
  )
}

function CheckField(props: {
  label: string
  checked: boolean
  disabled?: boolean
  onChange?: (checked: boolean) => void
  testId?: string
  children: ReactNode
}) {
  const id = useId()
  return (
    <div className={styles.field} data-disabled={props.disabled || undefined}>
      <input
        id={id}
        type="checkbox"
        className={styles.checkbox}
        checked={props.checked}
        disabled={props.disabled}
        aria-describedby={`${id}-help`}
        data-testid={props.testId}
        onChange={(event) => props.onChange?.(event.target.checked)}
      />
      <div className={styles.fieldText}>
        <label htmlFor={id} className={styles.label}>
          {props.label}
        </label>
        <p id={`${id}-help`} className={styles.help}>
          {props.children}
        </p>
      </div>
    </div>
  )
}

function FrequencyField({ value, onChange }: { value: BackupFrequency; onChange: (value: BackupFrequency) => void }) {
  const id = useId()
  return (
    <div className={styles.field}>
      <div className={styles.fieldText}>
        <label htmlFor={id} className={styles.label}>
          Frequency
        </label>
        <p id={`${id}-help`} className={styles.help}>
          How often automatic backups run.
        </p>
      </div>
      <select
        id={id}
        className={styles.select}
        value={value}
        aria-describedby={`${id}-help`}
        onChange={(event) => onChange(event.target.value as BackupFrequency)}
      >
        {backupFrequencies.map((frequency) => (
          <option key={frequency} value={frequency}>
            {frequencyLabels[frequency]} ({frequencyHints[frequency]})
          </option>
        ))}
      </select>
    </div>
  )
}

function RetentionField(props: {
  value: string
  error: string | null
  onChange: (text: string) => void
  onCommit: () => void
}) {
  const id = useId()
  return (
    <div className={styles.field}>
      <div className={styles.fieldText}>
        <label htmlFor={id} className={styles.label}>
          Keep each backup for
        </label>
        <p id={`${id}-help`} className={styles.help}>
          Relay Cloud deletes a backup this many days after it was made. A change applies to new backups.{' '}
          <span className={styles.range}>
            ({retentionRange.min}–{retentionRange.max} days)
          </span>
        </p>
        {props.error && (
          <p id={`${id}-error`} className={styles.fieldError} data-testid="retention-error">
            {props.error}
          </p>
        )}
      </div>
      <div className={styles.inputRow}>
        <input
          id={id}
          type="number"
          inputMode="numeric"
          className={styles.number}
          value={props.value}
          min={retentionRange.min}
          max={retentionRange.max}
          step={1}
          aria-invalid={props.error ? true : undefined}
          aria-describedby={props.error ? `${id}-help ${id}-error` : `${id}-help`}
          onChange={(event) => props.onChange(event.target.value)}
          onBlur={props.onCommit}
        />
        <span className={styles.unit}>days</span>
      </div>
    </div>
  )
}
