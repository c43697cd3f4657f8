import type { CreateStreamBody, Stream } from '@relay/contracts'
import { useMutation } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { toast } from 'sonner'
import { api } from '../api'
import { CopyButton } from '../ui/CopyButton'
import common from '../ui/common.module.css'
import { Field, InputField } from '../ui/Field'
import form from '../ui/form.module.css'
import { type FormErrors, formErrorsOf, noErrors } from './form-errors'
import { useRefreshSources } from './queries'
import { NameField, SourceFormFrame } from './SourceFormFrame'
import styles from './SourcesPage.module.css'
import { type StreamDraft, streamFields, streamTypes, toStreamBody, toStreamDraft, webSocketUrl } from './stream-form'

/** Creates a stream, or edits `stream` when given. */
export function StreamForm({ stream, onDone }: { stream?: Stream; onDone: () => void }) {
  const refresh = useRefreshSources()
  const [draft, setDraft] = useState(() => toStreamDraft(stream))
  const [errors, setErrors] = useState<FormErrors>(noErrors)

  const save = useMutation({
    mutationFn: (body: CreateStreamBody) =>
      stream
        ? // An emptied label is cleared on the relay, not left as it was.
          api.updateStream(stream.id, { ...body, deviceName: body.deviceName ?? null, screenId: body.screenId ?? null })
        : api.createStream(body),
    onSuccess: async (saved) => {
      toast.success(stream ? `Saved stream ${saved.name}` : `Created stream ${saved.name}`)
      await refresh()
      onDone()
    },
    onError: (error) => setErrors(formErrorsOf(error, streamFields)),
  })

  const edit = (change: Partial<StreamDraft>) => setDraft((previous) => ({ ...previous, ...change }))
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const check = toStreamBody(draft)
    if (!check.ok) {
      setErrors({ fields: check.errors, form: [] })
      return
    }
    setErrors(noErrors)
    save.mutate(check.body)
  }
  const text = (
    field: keyof StreamDraft,
    label: string,
    options: { error?: string; hint?: string; placeholder?: string; wide?: boolean } = {},
  ) => (
    <InputField
      label={label}
      hint={options.hint}
      error={options.error}
      className={options.wide ? styles.wide : undefined}
      placeholder={options.placeholder}
      value={draft[field]}
      onChange={(value) => edit({ [field]: value })}
    />
  )

  return (
    <SourceFormFrame
      kind="stream"
      editing={stream?.name}
      isSaving={save.isPending}
      formErrors={errors.form}
      onSubmit={submit}
      onCancel={onDone}
    >
      <NameField value={draft.name} error={errors.fields.name} onChange={(name) => edit({ name })} />
      <Field label="Type" error={errors.fields.type}>
        {(control) => (
          <select
            {...control}
            className={form.textInput}
            value={draft.type}
            onChange={(event) => edit({ type: event.target.value as StreamDraft['type'] })}
          >
            {streamTypes.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        )}
      </Field>
      {text('deviceName', 'Device name (optional)', {
        error: errors.fields.deviceName,
        hint: 'Sent with each payload',
      })}
      {text('screenId', 'Screen ID (optional)', { error: errors.fields.screenId, hint: 'Sent with each payload' })}
      {draft.type === 'HTTP' &&
        text('url', 'URL', {
          error: errors.fields['settings.url'],
          hint: 'Each payload is POSTed here as JSON',
          placeholder: 'https://display.local/api/data',
          wide: true,
        })}
      {draft.type === 'MQTT' && (
        <>
          {text('brokerUrl', 'Broker URL', {
            error: errors.fields['settings.brokerUrl'],
            placeholder: 'mqtt://127.0.0.1:1883',
          })}
          {text('topic', 'Topic', { error: errors.fields['settings.topic'], placeholder: 'relay/display' })}
        </>
      )}
      {draft.type === 'COM' && (
        <>
          {text('path', 'Port', { error: errors.fields['settings.path'], placeholder: '/dev/ttyUSB0 or COM3' })}
          {text('baudRate', 'Baud rate (optional)', {
            error: errors.fields['settings.baudRate'],
            placeholder: '9600',
          })}
        </>
      )}
      {draft.type === 'WebSocket' && <WebSocketNote stream={stream} />}
      {draft.type === 'Virtual' && (
        <p className={`${common.note} ${styles.wide}`}>
          Keeps the last payload inside the relay; useful for trying a junction out.
        </p>
      )}
    </SourceFormFrame>
  )
}

function WebSocketNote({ stream }: { stream?: Stream }) {
  if (!stream) {
    return (
      <p className={`${common.note} ${styles.wide}`}>
        Clients connect to the relay to receive the payloads. The address to subscribe to appears once the stream is
        created.
      </p>
    )
  }
  const url = webSocketUrl(stream.id)
  return (
    <div className={`${common.note} ${styles.wide}`}>
      Clients subscribe at{' '}
      <span className={styles.copyRow}>
        <code className={styles.code}>{url}</code>
        <CopyButton value={url} label="subscribe URL" />
      </span>
    </div>
  )
}
