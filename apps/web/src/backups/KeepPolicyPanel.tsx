import {
  type BackupFrequency,
  type KeepPolicy,
  type KeepRule,
  keepCountRange,
  keepNothingMessage,
  keepRules,
  type RetentionReply,
} from '@relay/contracts'
import { type FormEvent, useState } from 'react'
import { ApiError } from '../api'
import common from '../ui/common.module.css'
import { FormAlert } from '../ui/FormAlert'
import form from '../ui/form.module.css'
import { Panel } from '../ui/Panel'
import { QueryStatus } from '../ui/QueryStatus'
import { SettingRow } from '../ui/SettingRow'
import pageStyles from './BackupsPage.module.css'
import styles from './KeepPolicyPanel.module.css'
import { useRetention, useSaveKeepPolicy } from './retention-queries'

const fields = {
  keepLast: { label: 'Newest backups', unit: 'backups', help: 'The most recent backups, whatever their dates.' },
  keepDaily: { label: 'Daily', unit: 'days', help: 'The newest backup of each of the last days (UTC) that have one.' },
  keepWeekly: {
    label: 'Weekly',
    unit: 'weeks',
    help: 'The newest backup of each of the last weeks (Monday to Sunday, UTC) that have one.',
  },
  keepMonthly: {
    label: 'Monthly',
    unit: 'months',
    help: 'The newest backup of each of the last months that have one.',
  },
} as const satisfies Record<KeepRule, { label: string; unit: string; help: string }>

const countMessage = `Enter a whole number from ${keepCountRange.min} to ${keepCountRange.max}`

type Texts = Partial<Record<KeepRule, string>>
type FieldErrors = Partial<Record<KeepRule, string>>

/** The typed counts as a policy, or what is wrong with them, each said before anything is sent. */
function parsePolicy(texts: Record<KeepRule, string>): { policy: KeepPolicy } | { errors: FieldErrors; form?: string } {
  const errors: FieldErrors = {}
  const policy = {} as KeepPolicy
  for (const rule of keepRules) {
    const text = texts[rule].trim()
    const count = Number(text)
    if (!/^\d+$/.test(text) || count < keepCountRange.min || count > keepCountRange.max) {
      errors[rule] = countMessage
    }
    policy[rule] = count
  }
  if (Object.keys(errors).length > 0) {
    return { errors }
  }
  return keepRules.some((rule) => policy[rule] > 0) ? { policy } : { errors: {}, form: keepNothingMessage }
}

/**
 * Which of this relay's cloud backups to keep (restic-style rules), saved on the relay, with how many
 * backups fit in the account's quota at the size of the newest one.
 */
export function KeepPolicyPanel({ frequency }: { frequency: BackupFrequency }) {
  const retention = useRetention(frequency)
  return (
    <Panel
      title="Keep policy"
      description="After each backup the relay deletes its older backups that no rule keeps, and before one, when the quota is full, the oldest it must. A backup kept by any rule is kept; the newest always is."
      className={styles.panel}
      testId="keep-policy"
    >
      <QueryStatus
        query={retention}
        loading="Reading the keep policy…"
        failed="Could not read the keep policy"
        className={styles.state}
      />
      {retention.data && <KeepPolicyForm reply={retention.data} frequency={frequency} />}
    </Panel>
  )
}

function KeepPolicyForm({ reply, frequency }: { reply: RetentionReply; frequency: BackupFrequency }) {
  const save = useSaveKeepPolicy(frequency)
  const [texts, setTexts] = useState<Texts>({})
  const [fieldErrors, setFieldErrors] = useState<FieldErrors>({})
  const [formError, setFormError] = useState<string | null>(null)
  const shown = Object.fromEntries(
    keepRules.map((rule) => [rule, texts[rule] ?? String(reply.policy[rule])]),
  ) as Record<KeepRule, string>

  const edit = (rule: KeepRule, text: string) => {
    setTexts((previous) => ({ ...previous, [rule]: text }))
    save.reset()
    // A message that shows follows the typing, so it goes as soon as the value is right.
    if (fieldErrors[rule]) {
      const parsed = parsePolicy({ ...shown, [rule]: text })
      setFieldErrors((previous) => ({ ...previous, [rule]: 'errors' in parsed ? parsed.errors[rule] : undefined }))
    }
  }

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const parsed = parsePolicy(shown)
    if ('errors' in parsed) {
      setFieldErrors(parsed.errors)
      setFormError(parsed.form ?? null)
      return
    }
    setFieldErrors({})
    setFormError(null)
    save.mutate(parsed.policy, {
      onSuccess: () => setTexts({}),
      onError: (error) => {
        const details = error instanceof ApiError ? error.details : []
        const byRule = Object.fromEntries(
          keepRules.flatMap((rule) => {
            const detail = details.find((d) => d.path.endsWith(rule))
            return detail ? [[rule, `Not saved: ${detail.message}`]] : []
          }),
        )
        setFieldErrors(byRule)
        setFormError(Object.keys(byRule).length > 0 ? null : error.message)
      },
    })
  }

  return (
    <form noValidate onSubmit={submit} className={form.form}>
      <fieldset className={pageStyles.group}>
        <legend>Backups to keep</legend>
        {keepRules.map((rule) => (
          <SettingRow
            key={rule}
            className={pageStyles.field}
            label={fields[rule].label}
            help={
              <>
                {fields[rule].help}{' '}
                <span className={form.range}>
                  ({keepCountRange.min}–{keepCountRange.max})
                </span>
              </>
            }
            error={fieldErrors[rule]}
            errorTestId={`${rule}-error`}
          >
            {(control) => (
              <div className={form.inputRow}>
                <input
                  {...control}
                  type="number"
                  inputMode="numeric"
                  className={form.number}
                  value={shown[rule]}
                  min={keepCountRange.min}
                  max={keepCountRange.max}
                  step={1}
                  onChange={(event) => edit(rule, event.target.value)}
                />
                <span className={`${form.unit} ${styles.unit}`}>{fields[rule].unit}</span>
              </div>
            )}
          </SettingRow>
        ))}
      </fieldset>

      <Projection reply={reply} />

      <FormAlert
        title="Not saved"
        messages={formError ? [formError] : []}
        className={pageStyles.formAlert}
        testId="keep-policy-error"
      />
      <div className={`${common.actions} ${styles.actions}`}>
        <button type="submit" className={common.primary} disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save keep policy'}
        </button>
        <p role="status" className={styles.saved} data-testid="keep-policy-status">
          {save.isSuccess && Object.keys(texts).length === 0 ? 'Keep policy saved' : ''}
        </p>
      </div>
    </form>
  )
}

/** What fits in the quota against what the policy keeps; a warning when the policy keeps more. */
function Projection({ reply }: { reply: RetentionReply }) {
  const { projection } = reply
  if (!projection) {
    return (
      <p className={`${common.note} ${styles.projection}`} data-testid="keep-projection" data-state="unknown">
        {reply.reason}
      </p>
    )
  }
  if (projection.exceedsQuota) {
    return (
      <div className={`${common.warning} ${styles.projection}`} data-testid="keep-projection" data-state="exceeds">
        <strong>The policy keeps more backups than fit in the quota.</strong> {projection.sentence}
      </div>
    )
  }
  return (
    <p className={`${common.note} ${styles.projection}`} data-testid="keep-projection" data-state="fits">
      {projection.sentence}
    </p>
  )
}
