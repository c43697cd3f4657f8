import { type ReactNode, useId } from 'react'
import styles from './SourcesPage.module.css'

/** What a field's control needs to be labelled and described. */
export type ControlProps = { id: string; 'aria-invalid': true | undefined; 'aria-describedby': string | undefined }

/** A labelled form control with an optional hint and an error below it. */
export function Field(props: {
  label: string
  hint?: ReactNode
  error?: string
  /** Spans the whole form width (text areas, notes). */
  wide?: boolean
  children: (control: ControlProps) => ReactNode
}) {
  const id = useId()
  const describedBy = [props.hint && `${id}-hint`, props.error && `${id}-error`].filter(Boolean).join(' ')
  return (
    <div className={props.wide ? `${styles.field} ${styles.wide}` : styles.field}>
      <label htmlFor={id} className={styles.label}>
        {props.label}
      </label>
      {props.children({
        id,
        'aria-invalid': props.error ? true : undefined,
        'aria-describedby': describedBy || undefined,
      })}
      {props.hint && (
        <p id={`${id}-hint`} className={styles.hint}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p id={`${id}-error`} className={styles.fieldError} data-testid="field-error">
          {props.error}
        </p>
      )}
    </div>
  )
}

/** The errors that belong to no field, above the form's buttons. */
export function FormAlert({ messages }: { messages: readonly string[] }) {
  if (messages.length === 0) {
    return null
  }
  return (
    <div role="alert" className={styles.alert} data-testid="form-error">
      <strong>Not saved</strong>
      {messages.map((message) => (
        <p key={message}>{message}</p>
      ))}
    </div>
  )
}
