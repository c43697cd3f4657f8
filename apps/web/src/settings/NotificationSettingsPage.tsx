import {
  type FeatureFlagName,
  type FeatureFlags,
  type FeatureFlagsUpdate,
  featureFlagDefaults,
  notificationTypes,
} from '@relay/contracts'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { ApiError, api } from '../api'
import { featureFlagsKey, useFeatureFlags } from '../feature-flags/use-feature-flags'
import common from '../ui/common.module.css'
import { FormAlert } from '../ui/FormAlert'
import form from '../ui/form.module.css'
import { Panel } from '../ui/Panel'
import { SwitchField } from '../ui/SwitchField'
import { FlagNumberField } from './FlagNumberField'
import { type BooleanFlag, type Draft, diffDraft, fieldErrors, type NumberFlag, toDraft } from './flag-form'
import styles from './SettingsPage.module.css'

/** The relay's notification flags: whether and what to show, how often to ask, and for how long. */
export function NotificationSettingsPage() {
  const flags = useFeatureFlags()
  return (
    <>
      <title>Notifications · Settings · Relay</title>
      {flags.isPending && (
        <p role="status" className={common.mutedText}>
          Loading settings…
        </p>
      )}
      {flags.isError && !flags.data && (
        <div role="alert" className={styles.alert}>
          <strong>Could not load the settings</strong>
          <p>{flags.error.message}</p>
          <button type="button" className={common.secondary} onClick={() => void flags.refetch()}>
            Try again
          </button>
        </div>
      )}
      {flags.data && <NotificationSettings saved={flags.data} />}
    </>
  )
}

type Errors = { fields: Partial<Record<FeatureFlagName, string>>; form: string[] }
const noErrors: Errors = { fields: {}, form: [] }

function NotificationSettings({ saved }: { saved: FeatureFlags }) {
  const queryClient = useQueryClient()
  const [edits, setEdits] = useState<Partial<Draft>>({})
  const [errors, setErrors] = useState<Errors>(noErrors)
  const [isSaved, setIsSaved] = useState(false)

  // Edits lie over what the relay holds, so a change made elsewhere shows in every field not being edited.
  const draft = { ...toDraft(saved), ...edits } as Draft
  const check = diffDraft(draft, saved)
  const changeCount = Object.keys(check.update).length
  const isDirty = changeCount > 0 || Object.keys(check.errors).length > 0

  const save = useMutation({
    mutationFn: (update: FeatureFlagsUpdate) => api.updateFeatureFlags(update),
    onSuccess: async (flags) => {
      queryClient.setQueryData(featureFlagsKey, flags)
      setEdits({})
      setErrors(noErrors)
      setIsSaved(true)
      await queryClient.invalidateQueries({ queryKey: featureFlagsKey })
    },
    onError: (error) => {
      if (error instanceof ApiError && error.details.length > 0) {
        const mapped = fieldErrors(error.details)
        setErrors({ fields: mapped.fields, form: mapped.form.length > 0 ? [error.message] : [] })
      } else {
        setErrors({ fields: {}, form: [error.message] })
      }
    },
  })

  const edit = <K extends FeatureFlagName>(flag: K, value: Draft[K]) => {
    setEdits((previous) => ({ ...previous, [flag]: value }))
    setErrors((previous) => ({ fields: { ...previous.fields, [flag]: undefined }, form: [] }))
    setIsSaved(false)
  }

  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (Object.keys(check.errors).length > 0) {
      setErrors({ fields: check.errors, form: [] })
      return
    }
    if (changeCount > 0) {
      save.mutate(check.update)
    }
  }

  const discard = () => {
    setEdits({})
    setErrors(noErrors)
  }

  const resetToDefaults = () => {
    setEdits(toDraft(featureFlagDefaults))
    setErrors(noErrors)
    setIsSaved(false)
  }

  const isOff = !draft.notifications_enabled
  const switchProps = (flag: BooleanFlag) => ({
    className: styles.field,
    name: flag,
    checked: draft[flag],
    onChange: (checked: boolean) => edit(flag, checked),
  })
  const numberProps = (flag: NumberFlag) => ({
    flag,
    value: draft[flag],
    error: errors.fields[flag],
    onChange: (value: string) => edit(flag, value),
  })

  return (
    <Panel
      title="Notifications"
      description="Stored in the relay, so they apply to every browser that opens it. The history keeps every notification whatever you choose here."
      className={styles.panel}
    >
      <form noValidate onSubmit={submit} className={form.form}>
        <div className={styles.group}>
          <SwitchField {...switchProps('notifications_enabled')} label="Show notifications">
            Pop-up messages in the corner of the screen. Off hides them all.
          </SwitchField>
          <SwitchField
            {...switchProps('notifications_backend_polling')}
            label="Fetch notifications from the relay"
            disabled={isOff}
          >
            Backups, sign-ins, devices and updates that the relay reports.
          </SwitchField>
          <FlagNumberField
            {...numberProps('notifications_polling_interval')}
            label="Polling interval"
            disabled={isOff || !draft.notifications_backend_polling}
          >
            How often this browser asks the relay for new notifications.
          </FlagNumberField>
          <FlagNumberField {...numberProps('notifications_max_concurrent')} label="Visible at once" disabled={isOff}>
            More wait their turn and appear as others close.
          </FlagNumberField>
        </div>

        <fieldset className={styles.group} disabled={isOff}>
          <legend>Categories to show</legend>
          <SwitchField {...switchProps('notifications_api_calls')} label="API calls" disabled={isOff}>
            Results of API requests.
          </SwitchField>
          <SwitchField {...switchProps('notifications_auth_events')} label="Authentication events" disabled={isOff}>
            Sign-ins, sign-outs, failed sign-ins and expired sessions.
          </SwitchField>
          <SwitchField {...switchProps('notifications_cloud_sync')} label="Cloud sync" disabled={isOff}>
            Cloud backups and cloud sign-in.
          </SwitchField>
          <SwitchField {...switchProps('notifications_system')} label="System" disabled={isOff}>
            Health reports, devices, junctions and updates.
          </SwitchField>
        </fieldset>

        <fieldset className={styles.group} disabled={isOff}>
          <legend>Display time</legend>
          <FlagNumberField {...numberProps('notifications_duration_success')} label="Success messages" disabled={isOff}>
            How long a success notification stays on screen.
          </FlagNumberField>
          <FlagNumberField {...numberProps('notifications_duration_error')} label="Error messages" disabled={isOff}>
            How long an error notification stays on screen.
          </FlagNumberField>
          <p className={styles.note}>
            Warnings stay {notificationTypes.warning.defaultDuration / 1000} s and info messages{' '}
            {notificationTypes.info.defaultDuration / 1000} s. A notification may also set its own time.
          </p>
        </fieldset>

        <FormAlert title="Not saved" messages={errors.form} className={styles.alert} testId="settings-error" />

        <div className={styles.actions}>
          <button type="submit" className={common.primary} disabled={!isDirty || save.isPending}>
            {save.isPending ? 'Saving…' : 'Save changes'}
          </button>
          <button type="button" className={common.secondary} onClick={discard} disabled={!isDirty || save.isPending}>
            Discard changes
          </button>
          <button type="button" className={common.secondary} onClick={resetToDefaults} disabled={save.isPending}>
            Reset to defaults
          </button>
          <p role="status" className={styles.status} data-testid="settings-status">
            {statusText(isSaved, isDirty, changeCount, Object.values(errors.fields).some(Boolean))}
          </p>
        </div>
      </form>
    </Panel>
  )
}

function statusText(isSaved: boolean, isDirty: boolean, changeCount: number, hasErrors: boolean): string {
  if (hasErrors) {
    return 'Fix the marked fields, then save.'
  }
  if (isDirty) {
    return changeCount === 1 ? '1 unsaved change' : `${changeCount} unsaved changes`
  }
  return isSaved ? 'Saved. Notifications use the new settings now.' : ''
}
