import type { CreateStreamBody, Stream } from '@relay/contracts'
import { useMutation } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { toast } from 'sonner'
import { api } from '../api'
import { CopyButton } from '../ui/CopyButton'
import { Field, FormAlert } from './Field'
import { type FormErrors, formErrorsOf, noErrors } from './form-errors'
import { useRefreshSources } from './queries'
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
    <Field label={label} hint={options.hint} error={options.error} wide={options.wide}>
      {(control) => (
        <input
          {...control}
          className={styles.input}
          placeholder={options.placeholder}
          value={draft[field]}
          onChange={(event) => edit({ [field]: event.target.value })}
        />
      )}
    </Field>
  )

  return (
    <form className={styles.formPanel} noValidate onSubmit={submit} aria-label={stream ? 'Edit stream' : 'New stream'}>
      <h3 className={styles.formTitle}>{stream ? `Edit ${stream.name}` : 'New stream'}</h3>
      <div className={styles.fields}>
        <Field label="Name" error={errors.fields.name}>
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
        <Field label="Type" error={errors.fields.type}>
          {(control) => (
            <select
              {...control}
              className={styles.input}
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
          <p className={`${styles.note} ${styles.wide}`}>
            Keeps the last payload inside the relay; useful for trying a junction out.
          </p>
        )}
      </div>
      <FormAlert messages={errors.form} />
      <div className={styles.formActions}>
        <button type="submit" className={styles.primary} disabled={save.isPending}>
          {save.isPending ? 'Saving…' : stream ? 'Save stream' : 'Create stream'}
        </button>
        <button type="button" className={styles.secondary} onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  )
}

function WebSocketNote({ stream }: { stream?: Stream }) {
  if (!stream) {
    return (
      <p className={`${styles.note} ${styles.wide}`}>
        Clients connect to the relay to receive the payloads. The address to subscribe to appears once the stream is
        created.
      </p>
    )
  }
  const url = webSocketUrl(stream.id)
  return (
    <div className={`${styles.note} ${styles.wide}`}>
      Clients subscribe at{' '}
      <span className={styles.copyRow}>
        <code className={styles.code}>{url}</code>
        <CopyButton value={url} label="subscribe URL" />
      </span>
    </div>
  )
}
