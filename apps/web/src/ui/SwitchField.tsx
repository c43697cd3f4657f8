import { type ReactNode, useId } from 'react'

/**
 * The page's CSS module, whose `field`, `switch`, `fieldText`, `label` and `help` classes (composed from
 * ui/form.module.css) style the row, so each page keeps its own variations.
 */
export type SwitchFieldStyles = Readonly<Record<string, string>>

/** A labelled on/off switch with its help text, as the settings forms show them. */
export function SwitchField(props: {
  styles: SwitchFieldStyles
  label: string
  checked: boolean
  name?: string
  disabled?: boolean
  onChange: (checked: boolean) => void
  children: ReactNode
}) {
  const { styles } = props
  const id = useId()
  return (
    <div className={styles.field} data-disabled={props.disabled || undefined}>
      <input
        id={id}
        type="checkbox"
        role="switch"
        aria-checked={props.checked}
        className={styles.switch}
        name={props.name}
        checked={props.checked}
        disabled={props.disabled}
        aria-describedby={`${id}-help`}
        onChange={(event) => props.onChange(event.target.checked)}
      />
      <div className={styles.fieldText}>
        <label htmlFor={id} className={styles.label}>
          {props.label}
        </label>
        <p id={`${id}-help`} className={styles.help}>
          {props.children}
        </p>
      </div>
    </div>
  )
}
