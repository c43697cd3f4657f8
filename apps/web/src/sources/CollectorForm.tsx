import { type Collector, type CreateCollectorBody, sourceLimits, type UpdateCollectorReply } from '@relay/contracts'
import { useMutation } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { toast } from 'sonner'
import { api } from '../api'
import {
  accessTokenRemoval,
  type CollectorDraft,
  collectorFields,
  collectorTypeOptions,
  editableCollectorTypes,
  toCollectorBody,
  toCollectorDraft,
} from './collector-form'
import { Field, FormAlert } from './Field'
import { type FormErrors, formErrorsOf, noErrors } from './form-errors'
import { useRefreshSources } from './queries'
import styles from './SourcesPage.module.css'

/** Creates a collector, or edits `collector` when given. */
export function CollectorForm({ collector, onDone }: { collector?: Collector; onDone: () => void }) {
  const refresh = useRefreshSources()
  const [draft, setDraft] = useState(() => toCollectorDraft(collector))
  const [errors, setErrors] = useState<FormErrors>(noErrors)

  const save = useMutation({
    mutationFn: async (body: CreateCollectorBody): Promise<UpdateCollectorReply> =>
      collector ? api.updateCollector(collector.id, body) : { ...(await api.createCollector(body)), warnings: [] },
    onSuccess: async (saved) => {
      toast.success(collector ? `Saved collector ${saved.name}` : `Created collector ${saved.name}`)
      // Shown after the form closes: a token removed because the address moved to another server.
      for (const warning of saved.warnings) {
        toast.warning(warning.message)
      }
      await refresh()
      onDone()
    },
    onError: (error) => setErrors(formErrorsOf(error, collectorFields)),
  })

  const edit = (change: Partial<CollectorDraft>) => {
    setDraft((previous) => ({ ...previous, ...change }))
  }

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const check = toCollectorBody(draft)
    if (!check.ok) {
      setErrors({ fields: check.errors, form: [] })
      return
    }
    setErrors(noErrors)
    save.mutate(check.body)
  }

  const error = (field: (typeof collectorFields)[number]) => errors.fields[field]
  const tokenRemoval = accessTokenRemoval(collector, draft)
  const { min, max } = sourceLimits.pollRate

  return (
    <form
      className={styles.formPanel}
      noValidate
      onSubmit={submit}
      aria-label={collector ? 'Edit collector' : 'New collector'}
    >
      <h3 className={styles.formTitle}>{collector ? `Edit ${collector.name}` : 'New collector'}</h3>
      <div className={styles.fields}>
        <Field label="Name" error={error('name')}>
          {(control) => (
            <input
              {...control}
              className={styles.input}
              value={draft.name}
              maxLength={100}
              // biome-ignore lint/a11y/noAutofocus: the form opens on a click that asks to fill it in.
              autoFocus
              onChange={(event) => edit({ name: event.target.value })}
            />
          )}
        </Field>
        <Field label="Type" error={error('collectorType')}>
          {(control) => (
            <select
              {...control}
              className={styles.input}
              value={draft.collectorType}
              onChange={(event) => edit({ collectorType: event.target.value as CollectorDraft['collectorType'] })}
            >
              {editableCollectorTypes.map((type) => (
                <option key={type} value={type}>
                  {collectorTypeOptions[type]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Poll rate (seconds)" hint={`${min / 1000}–${max / 1000} seconds`} error={error('pollRateMs')}>
          {(control) => (
            <input
              {...control}
              className={styles.input}
              type="number"
              inputMode="decimal"
              min={min / 1000}
              max={max / 1000}
              step="any"
              value={draft.pollRate}
              onChange={(event) => edit({ pollRate: event.target.value })}
            />
          )}
        </Field>
        <TypeSettings draft={draft} errors={errors} edit={edit} />
        {draft.collectorType === 'GenericAPI' && (
          <AccessTokenFields
            draft={draft}
            tokenKept={collector?.hasAccessToken && !tokenRemoval}
            errors={errors}
            edit={edit}
          />
        )}
        {tokenRemoval && (
          <p role="status" className={`${styles.warningNote} ${styles.wide}`} data-testid="token-removal-note">
            {tokenRemoval}
          </p>
        )}
      </div>
      <FormAlert messages={errors.form} />
      <div className={styles.formActions}>
        <button type="submit" className={styles.primary} disabled={save.isPending}>
          {save.isPending ? 'Saving…' : collector ? 'Save collector' : 'Create collector'}
        </button>
        <button type="button" className={styles.secondary} onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  )
}

type PartProps = { draft: CollectorDraft; errors: FormErrors; edit: (change: Partial<CollectorDraft>) => void }

function TypeSettings({ draft, errors, edit }: PartProps) {
  switch (draft.collectorType) {
    case 'GenericAPI':
      return (
        <>
          <Field label="URL" hint="A JSON document, fetched with GET" error={errors.fields['settings.url']} wide>
            {(control) => (
              <input
                {...control}
                className={styles.input}
                type="url"
                placeholder="https://example.com/api/status"
                value={draft.url}
                onChange={(event) => edit({ url: event.target.value })}
              />
            )}
          </Field>
          <Field
            label="Sensor paths (optional)"
            hint={
              <>
                One a line: <code>path</code> or <code>path|name|unit</code>, e.g. <code>data.0.temp|Kitchen|°C</code>.
                Empty reads every number in the document.
              </>
            }
            error={errors.fields['settings.sensors']}
            wide
          >
            {(control) => (
              <textarea
                {...control}
                className={styles.textarea}
                rows={3}
                value={draft.sensorPaths}
                onChange={(event) => edit({ sensorPaths: event.target.value })}
              />
            )}
          </Field>
        </>
      )
    case 'MQTT':
      return (
        <>
          <Field label="Broker URL" error={errors.fields['settings.brokerUrl']} wide>
            {(control) => (
              <input
                {...control}
                className={styles.input}
                type="url"
                placeholder="mqtt://127.0.0.1:1883"
                value={draft.brokerUrl}
                onChange={(event) => edit({ brokerUrl: event.target.value })}
              />
            )}
          </Field>
          <Field label="Topics" hint="One a line; + and # wildcards work" error={errors.fields['settings.topics']} wide>
            {(control) => (
              <textarea
                {...control}
                className={styles.textarea}
                rows={3}
                placeholder="sensors/#"
                value={draft.topics}
                onChange={(event) => edit({ topics: event.target.value })}
              />
            )}
          </Field>
        </>
      )
    case 'Virtual':
      return (
        <>
          <NumberField
            label="Sensor count"
            hint="1–100"
            value={draft.sensorCount}
            error={errors.fields['settings.sensorCount']}
            onChange={(sensorCount) => edit({ sensorCount })}
          />
          <NumberField
            label="Minimum (optional)"
            hint="Default 0"
            value={draft.min}
            error={errors.fields['settings.min']}
            onChange={(min) => edit({ min })}
          />
          <NumberField
            label="Maximum (optional)"
            hint="Default 100"
            value={draft.max}
            error={errors.fields['settings.max']}
            onChange={(max) => edit({ max })}
          />
        </>
      )
    case 'Host':
      return (
        <p className={`${styles.note} ${styles.wide}`}>Reads this machine's own sensors; there is nothing to set.</p>
      )
    default: {
      const unknownType: never = draft.collectorType
      throw new Error(`Unknown collector type ${String(unknownType)}`)
    }
  }
}

function NumberField(props: {
  label: string
  hint: string
  value: string
  error?: string
  onChange: (value: string) => void
}) {
  return (
    <Field label={props.label} hint={props.hint} error={props.error}>
      {(control) => (
        <input
          {...control}
          className={styles.input}
          type="number"
          inputMode="decimal"
          step="any"
          value={props.value}
          onChange={(event) => props.onChange(event.target.value)}
        />
      )}
    </Field>
  )
}

function AccessTokenFields({ draft, tokenKept, errors, edit }: PartProps & { tokenKept?: boolean }) {
  return (
    <>
      <Field
        label="Access token (optional)"
        hint={tokenKept ? 'A token is stored. Leave empty to keep it.' : 'Sent as a bearer token; stored encrypted.'}
        error={errors.fields.accessToken}
      >
        {(control) => (
          <input
            {...control}
            className={styles.input}
            type="password"
            autoComplete="off"
            value={draft.accessToken}
            onChange={(event) => edit({ accessToken: event.target.value })}
          />
        )}
      </Field>
      <Field
        label="Protect with password (optional)"
        hint="At least 8 characters. The token then stays locked after each relay restart until unlocked with it."
        error={errors.fields.accessTokenPassword}
      >
        {(control) => (
          <input
            {...control}
            className={styles.input}
            type="password"
            autoComplete="new-password"
            disabled={!draft.accessToken}
            value={draft.accessTokenPassword}
            onChange={(event) => edit({ accessTokenPassword: event.target.value })}
          />
        )}
      </Field>
    </>
  )
}
