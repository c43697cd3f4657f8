import type { ReactNode } from 'react'
import form from '../ui/form.module.css'
import { SettingRow } from '../ui/SettingRow'
import { type NumberFlag, numberUnits, rangeOf } from './flag-form'
import styles from './SettingsPage.module.css'

/** A number flag's row: its input in the flag's unit, with the allowed range in the help. */
export function FlagNumberField(props: {
  flag: NumberFlag
  label: string
  value: string
  error: string | undefined
  disabled?: boolean
  onChange: (value: string) => void
  children: ReactNode
}) {
  const unit = numberUnits[props.flag]
  const { min, max } = rangeOf(props.flag)
  const unitLabel = unit === 'seconds' ? 'seconds' : undefined
  const range = unit === 'seconds' ? `${min}–${max} seconds` : `${min}–${max}`
  return (
    <SettingRow
      className={styles.field}
      label={props.label}
      help={
        <>
          {props.children} <span className={form.range}>({range})</span>
        </>
      }
      error={props.error}
      errorTestId={`error-${props.flag}`}
      disabled={props.disabled}
    >
      {(control) => (
        <div className={styles.inputRow}>
          <input
            {...control}
            type="number"
            inputMode="decimal"
            className={form.number}
            name={props.flag}
            value={props.value}
            min={min}
            max={max}
            step={unit === 'seconds' ? 'any' : 1}
            disabled={props.disabled}
            onChange={(event) => props.onChange(event.target.value)}
          />
          {unitLabel && <span className={form.unit}>{unitLabel}</span>}
        </div>
      )}
    </SettingRow>
  )
}
