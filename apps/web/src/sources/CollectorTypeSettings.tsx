import type { ReactNode } from 'react'
import common from '../ui/common.module.css'
import { Field, InputField } from '../ui/Field'
import form from '../ui/form.module.css'
import type { CollectorDraft } from './collector-form'
import type { FormErrors } from './form-errors'
import styles from './SourcesPage.module.css'

/** A Virtual collector makes up its values: how many sensors, and between which bounds. */
const virtualFields = [
  { field: 'sensorCount', label: 'Sensor count', hint: '1–100' },
  { field: 'min', label: 'Minimum (optional)', hint: 'Default 0' },
  { field: 'max', label: 'Maximum (optional)', hint: 'Default 100' },
] as const

type PartProps = { draft: CollectorDraft; errors: FormErrors; edit: (change: Partial<CollectorDraft>) => void }

/** The settings of the collector's type: what to fetch, where to listen, or how many values to make up. */
export function CollectorTypeSettings({ draft, errors, edit }: PartProps) {
  switch (draft.collectorType) {
    case 'GenericAPI':
      return (
        <>
          <UrlField
            label="URL"
            hint="A JSON document, fetched with GET"
            error={errors.fields['settings.url']}
            placeholder="https://example.com/api/status"
            value={draft.url}
            onChange={(url) => edit({ url })}
          />
          <LinesField
            label="Sensor paths (optional)"
            hint={
              <>
                One a line: <code>path</code> or <code>path|name|unit</code>, e.g. <code>data.0.temp|Kitchen|°C</code>.
                Empty reads every number in the document.
              </>
            }
            error={errors.fields['settings.sensors']}
            value={draft.sensorPaths}
            onChange={(sensorPaths) => edit({ sensorPaths })}
          />
        </>
      )
    case 'MQTT':
      return (
        <>
          <UrlField
            label="Broker URL"
            error={errors.fields['settings.brokerUrl']}
            placeholder="mqtt://127.0.0.1:1883"
            value={draft.brokerUrl}
            onChange={(brokerUrl) => edit({ brokerUrl })}
          />
          <LinesField
            label="Topics"
            hint="One a line; + and # wildcards work"
            error={errors.fields['settings.topics']}
            placeholder="sensors/#"
            value={draft.topics}
            onChange={(topics) => edit({ topics })}
          />
        </>
      )
    case 'Virtual':
      return (
        <>
          {virtualFields.map(({ field, label, hint }) => (
            <InputField
              key={field}
              label={label}
              hint={hint}
              error={errors.fields[`settings.${field}`]}
              type="number"
              inputMode="decimal"
              step="any"
              value={draft[field]}
              onChange={(value) => edit({ [field]: value })}
            />
          ))}
        </>
      )
    case 'Host':
      return (
        <p className={`${common.note} ${styles.wide}`}>Reads this machine's own sensors; there is nothing to set.</p>
      )
    default: {
      const unknownType: never = draft.collectorType
      throw new Error(`Unknown collector type ${String(unknownType)}`)
    }
  }
}

type WideFieldProps = {
  label: string
  hint?: ReactNode
  error: string | undefined
  placeholder?: string
  value: string
  onChange: (value: string) => void
}

/** An address the collector reads from, across the whole form. */
function UrlField(props: WideFieldProps) {
  return <InputField {...props} className={styles.wide} type="url" />
}

/** A list typed one item a line, across the whole form. */
function LinesField({ value, onChange, placeholder, ...field }: WideFieldProps) {
  return (
    <Field {...field} className={styles.wide}>
      {(control) => (
        <textarea
          {...control}
          className={form.textarea}
          rows={3}
          placeholder={placeholder}
          value={value}
          onChange={(event) => onChange(event.target.value)}
        />
      )}
    </Field>
  )
}

/** A GenericAPI collector's bearer token, and the password that may lock it. */
export function AccessTokenFields({ draft, tokenKept, errors, edit }: PartProps & { tokenKept?: boolean }) {
  return (
    <>
      <InputField
        label="Access token (optional)"
        hint={tokenKept ? 'A token is stored. Leave empty to keep it.' : 'Sent as a bearer token; stored encrypted.'}
        error={errors.fields.accessToken}
        type="password"
        autoComplete="off"
        value={draft.accessToken}
        onChange={(accessToken) => edit({ accessToken })}
      />
      <InputField
        label="Protect with password (optional)"
        hint="At least 8 characters. The token then stays locked after each relay restart until unlocked with it."
        error={errors.fields.accessTokenPassword}
        type="password"
        autoComplete="new-password"
        disabled={!draft.accessToken}
        value={draft.accessTokenPassword}
        onChange={(accessTokenPassword) => edit({ accessTokenPassword })}
      />
    </>
  )
}
