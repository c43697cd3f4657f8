import { type Collector, type CreateJunctionBody, type Junction, type Stream, sourceLimits } from '@relay/contracts'
import { useMutation } from '@tanstack/react-query'
import { type FormEvent, useId, useState } from 'react'
import { toast } from 'sonner'
import { api } from '../api'
import common from '../ui/common.module.css'
import form from '../ui/form.module.css'
import { type FormErrors, formErrorsOf, noErrors } from './form-errors'
import {
  changesOf,
  defaultSendRate,
  type JunctionDraft,
  junctionFields,
  toJunctionBody,
  toJunctionDraft,
} from './junction-form'
import { useRefreshSources } from './queries'
import { NameField, SourceFormFrame } from './SourceFormFrame'
import styles from './SourcesPage.module.css'

type Props = { junction?: Junction; collectors: readonly Collector[]; streams: readonly Stream[]; onDone: () => void }

/** Creates a junction, or edits `junction` when given: which collectors feed which streams, how often. */
export function JunctionForm({ junction, collectors, streams, onDone }: Props) {
  const refresh = useRefreshSources()
  const [draft, setDraft] = useState(() => toJunctionDraft(junction))
  const [errors, setErrors] = useState<FormErrors>(noErrors)
  const collectorsId = useId()
  const targetsId = useId()

  const save = useMutation({
    mutationFn: (body: CreateJunctionBody) =>
      junction ? api.updateJunction(junction.id, changesOf(body, junction)) : api.createJunction(body),
    onSuccess: async (saved) => {
      toast.success(junction ? `Saved junction ${saved.name}` : `Created junction ${saved.name}`)
      await refresh()
      onDone()
    },
    onError: (error) => setErrors(formErrorsOf(error, junctionFields)),
  })

  const edit = (change: Partial<JunctionDraft>) => setDraft((previous) => ({ ...previous, ...change }))
  const toggleCollector = (id: string, checked: boolean) =>
    edit({ collectorIds: checked ? [...draft.collectorIds, id] : draft.collectorIds.filter((other) => other !== id) })
  const toggleTarget = (streamId: string, checked: boolean) =>
    edit({
      targets: checked
        ? [...draft.targets, { streamId, sendRate: defaultSendRate }]
        : draft.targets.filter((target) => target.streamId !== streamId),
    })
  const setSendRate = (streamId: string, sendRate: string) =>
    edit({ targets: draft.targets.map((target) => (target.streamId === streamId ? { streamId, sendRate } : target)) })

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const check = toJunctionBody(draft)
    if (!check.ok) {
      setErrors({ fields: check.errors, form: [] })
      return
    }
    if (junction && Object.keys(changesOf(check.body, junction)).length === 0) {
      onDone()
      return
    }
    setErrors(noErrors)
    save.mutate(check.body)
  }

  const isLocked = junction?.status === 'Running'
  const { min, max } = sourceLimits.sendRate

  return (
    <SourceFormFrame
      kind="junction"
      editing={junction?.name}
      isSaving={save.isPending}
      formErrors={errors.form}
      onSubmit={submit}
      onCancel={onDone}
    >
      <NameField value={draft.name} error={errors.fields.name} onChange={(name) => edit({ name })} />
      <label className={styles.checkRow}>
        <input
          type="checkbox"
          checked={draft.autoStart}
          onChange={(event) => edit({ autoStart: event.target.checked })}
        />
        Start automatically when the relay starts
      </label>

      <fieldset
        className={`${styles.choices} ${styles.wide}`}
        disabled={isLocked}
        aria-describedby={`${collectorsId}-help`}
      >
        <legend className={form.stackedLabel}>Collectors</legend>
        <p id={`${collectorsId}-help`} className={form.hint}>
          {isLocked ? 'Stop the junction to change its collectors.' : 'Their sensors are sent to every target.'}
        </p>
        {collectors.length === 0 && <p className={common.mutedText}>No collectors yet.</p>}
        {collectors.map((collector) => (
          <label key={collector.id} className={styles.checkRow}>
            <input
              type="checkbox"
              checked={draft.collectorIds.includes(collector.id)}
              onChange={(event) => toggleCollector(collector.id, event.target.checked)}
            />
            {collector.name} <span className={common.mutedText}>({collector.collectorType})</span>
          </label>
        ))}
        {errors.fields.collectorIds && <p className={form.stackedError}>{errors.fields.collectorIds}</p>}
      </fieldset>

      <fieldset
        className={`${styles.choices} ${styles.wide}`}
        disabled={isLocked}
        aria-describedby={`${targetsId}-help`}
      >
        <legend className={form.stackedLabel}>Targets</legend>
        <p id={`${targetsId}-help`} className={form.hint}>
          {isLocked
            ? 'Stop the junction to change its targets.'
            : `Streams to send to, each at its own rate (${min / 1000}–${max / 1000} seconds).`}
        </p>
        {streams.length === 0 && <p className={common.mutedText}>No streams yet.</p>}
        {streams.map((stream) => {
          const target = draft.targets.find((candidate) => candidate.streamId === stream.id)
          return (
            <div key={stream.id} className={styles.targetRow}>
              <label className={styles.checkRow}>
                <input
                  type="checkbox"
                  checked={target !== undefined}
                  onChange={(event) => toggleTarget(stream.id, event.target.checked)}
                />
                {stream.name} <span className={common.mutedText}>({stream.type})</span>
              </label>
              {target && (
                <label className={styles.rateInput}>
                  every
                  <input
                    className={styles.input}
                    type="number"
                    inputMode="decimal"
                    step="any"
                    min={min / 1000}
                    max={max / 1000}
                    value={target.sendRate}
                    aria-label={`Send rate to ${stream.name}, seconds`}
                    onChange={(event) => setSendRate(stream.id, event.target.value)}
                  />
                  s
                </label>
              )}
            </div>
          )
        })}
        {errors.fields.targets && <p className={form.stackedError}>{errors.fields.targets}</p>}
      </fieldset>
    </SourceFormFrame>
  )
}
