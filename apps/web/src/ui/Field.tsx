import { type InputHTMLAttributes, type ReactNode, useId } from 'react'
import form from './form.module.css'

/** What a field's control needs to be labelled and described. */
export type ControlProps = { id: string; 'aria-invalid': true | undefined; 'aria-describedby': string | undefined }

/** A label above its control, then a hint and an error, both tied to the control for screen readers. */
export function Field(props: {
  label: string
  hint?: ReactNode
  error?: string
  /** Shows the error in place of the hint, where both would say the same ("At least 8 characters"). */
  errorReplacesHint?: boolean
  /** The error's data-testid (default `field-error`). */
  errorTestId?: string
  /** More classes for the field's box, e.g. to span a form's grid. */
  className?: string
  children: (control: ControlProps) => ReactNode
}) {
  const id = useId()
  const hint = props.error && props.errorReplacesHint ? undefined : props.hint
  const describedBy = [hint && `${id}-hint`, props.error && `${id}-error`].filter(Boolean).join(' ')
  return (
    <div className={props.className ? `${form.stackedField} ${props.className}` : form.stackedField}>
      <label htmlFor={id} className={form.stackedLabel}>
        {props.label}
      </label>
      {props.children({
        id,
        'aria-invalid': props.error ? true : undefined,
        'aria-describedby': describedBy || undefined,
      })}
      {hint && (
        <p id={`${id}-hint`} className={form.hint}>
          {hint}
        </p>
      )}
      {props.error && (
        <p id={`${id}-error`} className={form.stackedError} data-testid={props.errorTestId ?? 'field-error'}>
          {props.error}
        </p>
      )}
    </div>
  )
}

type InputAttributes = Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'className' | 'value' | 'onChange'>

/** A field whose control is a text, number or password input. */
export function InputField({
  label,
  hint,
  error,
  errorReplacesHint,
  errorTestId,
  className,
  value,
  onChange,
  ...input
}: Omit<Parameters<typeof Field>[0], 'children'> &
  InputAttributes & { value: string; onChange: (value: string) => void }) {
  return (
    <Field
      label={label}
      hint={hint}
      error={error}
      errorReplacesHint={errorReplacesHint}
      errorTestId={errorTestId}
      className={className}
    >
      {(control) => (
        <input
          {...input}
          {...control}
          className={form.textInput}
          value={value}
          onChange={(event) => onChange(event.target.value)}
        />
      )}
    </Field>
  )
}
