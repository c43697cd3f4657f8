import { type ReactNode, useId } from 'react'
import form from './form.module.css'

/** What the row's control needs to be named and described by the label, the help and the error. */
export type SettingControlProps = { id: string; 'aria-describedby': string; 'aria-invalid': true | undefined }

/** A settings row: the label with its help (and an error below it) beside the control. */
export function SettingRow(props: {
  label: string
  help: ReactNode
  error?: string | null
  errorTestId?: string
  disabled?: boolean
  /** A switch or a checkbox stands before its label; an input or a select after it. */
  controlFirst?: boolean
  /** The page's class for the row, e.g. how a disabled row looks (`[data-disabled]`). */
  className?: string
  children: (control: SettingControlProps) => ReactNode
}) {
  const id = useId()
  const control = props.children({
    id,
    'aria-describedby': props.error ? `${id}-help ${id}-error` : `${id}-help`,
    'aria-invalid': props.error ? true : undefined,
  })
  return (
    <div
      className={props.className ? `${form.field} ${props.className}` : form.field}
      data-disabled={props.disabled || undefined}
    >
      {props.controlFirst && control}
      <div className={form.fieldText}>
        <label htmlFor={id} className={form.label}>
          {props.label}
        </label>
        <p id={`${id}-help`} className={form.help}>
          {props.help}
        </p>
        {props.error && (
          <p id={`${id}-error`} className={form.fieldError} data-testid={props.errorTestId}>
            {props.error}
          </p>
        )}
      </div>
      {!props.controlFirst && control}
    </div>
  )
}
