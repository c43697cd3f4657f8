import {
  type BackupSettings,
  type BackupSettingsChange,
  type BackupStatusReply,
  backupSchedule,
} from '@relay/contracts'
import { useIsMutating, useMutation, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { ApiError, api } from '../api'
import { FormAlert } from '../ui/FormAlert'
import form from '../ui/form.module.css'
import { Panel } from '../ui/Panel'
import { SwitchField } from '../ui/SwitchField'
import styles from './BackupsPage.module.css'
import { componentLabels } from './labels'
import { backupKeys } from './queries'
import { parseRetention } from './retention'
import { CheckField, ComponentField, FrequencyField, KeysNote, RetentionField } from './SettingsFields'

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
    <Panel
      title="Settings"
      description="Kept in Relay Cloud; they apply to every relay of your account."
      className={styles.panel}
      testId="backup-settings"
    >
      <form noValidate onSubmit={submit} className={form.form}>
        <div className={styles.group}>
          <SwitchField
            className={styles.field}
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

        <FormAlert
          title="Not saved"
          messages={formError ? [formError] : []}
          className={styles.formAlert}
          testId="settings-error"
        />
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
    </Panel>
  )
}
