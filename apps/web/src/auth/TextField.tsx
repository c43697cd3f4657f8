import { type HTMLInputTypeAttribute, useId } from 'react'
import styles from './AuthForm.module.css'

/** A labelled text input with an optional hint and an error below it. */
export function TextField(props: {
  label: string
  name: string
  type?: HTMLInputTypeAttribute
  autoComplete: string
  value: string
  hint?: string
  error?: string
  onChange: (value: string) => void
}) {
  const id = useId()
  // The error replaces the hint: both often say the same ("At least 8 characters").
  const hint = props.error ? undefined : props.hint
  const describedBy = [hint && `${id}-hint`, props.error && `${id}-error`].filter(Boolean).join(' ')
  return (
    <div className={styles.field}>
      <label htmlFor={id} className={styles.label}>
        {props.label}
      </label>
      <input
        id={id}
        className={styles.input}
        name={props.name}
        type={props.type ?? 'text'}
        autoComplete={props.autoComplete}
        autoCapitalize="none"
        spellCheck={false}
        value={props.value}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={describedBy || undefined}
        onChange={(event) => props.onChange(event.target.value)}
      />
      {hint && (
        <p id={`${id}-hint`} className={styles.hint}>
          {hint}
        </p>
      )}
      {props.error && (
        <p id={`${id}-error`} className={styles.fieldError} data-testid={`error-${props.name}`}>
          {props.error}
        </p>
      )}
    </div>
  )
}

/** The errors that belong to no field, above the form's buttons. */
export function FormAlert({ title, messages }: { title: string; messages: readonly string[] }) {
  if (messages.length === 0) {
    return null
  }
  return (
    <div role="alert" className={styles.alert} data-testid="form-error">
      <strong>{title}</strong>
      {messages.map((message) => (
        <p key={message}>{message}</p>
      ))}
    </div>
  )
}
