import { silencePresets } from '@relay/contracts'
import { type FormEvent, useId, useState } from 'react'
import { api } from '../api'
import common from '../ui/common.module.css'
import { Field } from '../ui/Field'
import { FormAlert } from '../ui/FormAlert'
import form from '../ui/form.module.css'
import styles from './HealthAlerts.module.css'
import { type AlertTarget, alertFailure, durationLabel, optionalText, textProblem } from './health-alerts'
import { useAlertChange } from './queries'

type Props = {
  /** Acknowledging names an item; a silence covers an item or a whole area. */
  kind: 'acknowledge' | 'silence'
  target: AlertTarget
  /** What the form is about, in words: "Temperature API", "all collectors". */
  subject: string
  onDone: () => void
}

const copy = {
  acknowledge: {
    title: (subject: string) => `Acknowledge ${subject}`,
    text: 'note',
    label: 'Note (optional)',
    hint: 'Up to 500 characters, shown beside the warning until the item recovers.',
    submit: 'Acknowledge',
    pending: 'Acknowledging…',
  },
  silence: {
    title: (subject: string) => `Silence ${subject}`,
    text: 'reason',
    label: 'Reason (optional)',
    hint: 'Up to 500 characters. No notifications are raised while the silence lasts.',
    submit: 'Silence',
    pending: 'Silencing…',
  },
} as const

/** A small form to acknowledge a warning with a note, or to silence an item or an area for a while. */
export function AlertForm({ kind, target, subject, onDone }: Props) {
  const text = copy[kind]
  const titleId = useId()
  const [note, setNote] = useState('')
  const [minutes, setMinutes] = useState<number>(silencePresets[1])
  const [noteError, setNoteError] = useState<string>()
  const change = useAlertChange(async () => {
    const written = optionalText(note)
    if (kind === 'silence') {
      return api.silence({ target, minutes, reason: written })
    }
    if (!('item' in target)) {
      throw new Error('Only a single item can be acknowledged.')
    }
    return api.acknowledge({ item: target.item, note: written })
  })

  function submit(event: FormEvent) {
    event.preventDefault()
    const problem = textProblem(note, text.text)
    setNoteError(problem)
    if (!problem) {
      change.mutate(undefined, { onSuccess: onDone })
    }
  }

  return (
    <form
      className={styles.form}
      aria-labelledby={titleId}
      onSubmit={submit}
      onKeyDown={(event) => event.key === 'Escape' && onDone()}
      data-testid={`${kind}-form`}
      noValidate
    >
      <h3 id={titleId} className={styles.formTitle}>
        {text.title(subject)}
      </h3>
      {kind === 'silence' && (
        <Field label="Silence for">
          {(control) => (
            <select
              {...control}
              className={form.select}
              value={minutes}
              // biome-ignore lint/a11y/noAutofocus: the form opens on a click meant to fill it in
              autoFocus
              onChange={(event) => setMinutes(Number(event.target.value))}
            >
              {silencePresets.map((preset) => (
                <option key={preset} value={preset}>
                  {durationLabel(preset)}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      <Field label={text.label} hint={text.hint} error={noteError}>
        {(control) => (
          <textarea
            {...control}
            className={form.textarea}
            rows={2}
            value={note}
            // biome-ignore lint/a11y/noAutofocus: the form opens on a click meant to fill it in
            autoFocus={kind === 'acknowledge'}
            onChange={(event) => setNote(event.target.value)}
          />
        )}
      </Field>
      <FormAlert
        title={`Could not ${kind} ${subject}`}
        messages={change.error ? [alertFailure(change.error, kind)] : []}
      />
      <div className={styles.formButtons}>
        <button type="submit" className={common.primary} disabled={change.isPending}>
          {change.isPending ? text.pending : text.submit}
        </button>
        <button type="button" className={common.secondary} onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  )
}
