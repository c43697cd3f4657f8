import { type Collector, type CreateCollectorBody, sourceLimits, type UpdateCollectorReply } from '@relay/contracts'
import { useMutation } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { toast } from 'sonner'
import { api } from '../api'
import common from '../ui/common.module.css'
import { Field, InputField } from '../ui/Field'
import form from '../ui/form.module.css'
import { AccessTokenFields, CollectorTypeSettings } from './CollectorTypeSettings'
import {
  accessTokenRemoval,
  type CollectorDraft,
  collectorFields,
  collectorTypeOptions,
  editableCollectorTypes,
  toCollectorBody,
  toCollectorDraft,
} from './collector-form'
import { type FormErrors, formErrorsOf, noErrors } from './form-errors'
import { useRefreshSources } from './queries'
import { NameField, SourceFormFrame } from './SourceFormFrame'
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
    <SourceFormFrame
      kind="collector"
      editing={collector?.name}
      isSaving={save.isPending}
      formErrors={errors.form}
      onSubmit={submit}
      onCancel={onDone}
    >
      <NameField value={draft.name} error={error('name')} onChange={(name) => edit({ name })} />
      <Field label="Type" error={error('collectorType')}>
        {(control) => (
          <select
            {...control}
            className={form.textInput}
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
      <InputField
        label="Poll rate (seconds)"
        hint={`${min / 1000}–${max / 1000} seconds`}
        error={error('pollRateMs')}
        type="number"
        inputMode="decimal"
        min={min / 1000}
        max={max / 1000}
        step="any"
        value={draft.pollRate}
        onChange={(pollRate) => edit({ pollRate })}
      />
      <CollectorTypeSettings draft={draft} errors={errors} edit={edit} />
      {draft.collectorType === 'GenericAPI' && (
        <AccessTokenFields
          draft={draft}
          tokenKept={collector?.hasAccessToken && !tokenRemoval}
          errors={errors}
          edit={edit}
        />
      )}
      {tokenRemoval && (
        <p role="status" className={`${common.warning} ${styles.wide}`} data-testid="token-removal-note">
          {tokenRemoval}
        </p>
      )}
    </SourceFormFrame>
  )
}
