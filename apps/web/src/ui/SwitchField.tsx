import type { ReactNode } from 'react'
import form from './form.module.css'
import { SettingRow } from './SettingRow'

/** A labelled on/off switch with its help text, as the settings forms show them. */
export function SwitchField(props: {
  label: string
  checked: boolean
  name?: string
  disabled?: boolean
  onChange: (checked: boolean) => void
  /** The page's class for the row (see SettingRow). */
  className?: string
  children: ReactNode
}) {
  return (
    <SettingRow
      label={props.label}
      help={props.children}
      disabled={props.disabled}
      className={props.className}
      controlFirst
    >
      {(control) => (
        <input
          {...control}
          type="checkbox"
          role="switch"
          aria-checked={props.checked}
          className={form.switch}
          name={props.name}
          checked={props.checked}
          disabled={props.disabled}
          onChange={(event) => props.onChange(event.target.checked)}
        />
      )}
    </SettingRow>
  )
}
