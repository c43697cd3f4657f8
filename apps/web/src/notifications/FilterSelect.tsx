import { useId } from 'react'
import styles from './NotificationsPage.module.css'

type Option = { value: string; label: string }

/** A labelled select whose first option lifts the filter. */
export function FilterSelect(props: {
  label: string
  value: string
  allLabel: string
  options: Option[]
  onChange: (value: string) => void
}) {
  const id = useId()
  return (
    <div className={styles.filter}>
      <label htmlFor={id}>{props.label}</label>
      <select
        id={id}
        className={styles.select}
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
      >
        <option value="">{props.allLabel}</option>
        {props.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  )
}
