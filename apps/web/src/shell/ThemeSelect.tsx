import { useId, useState } from 'react'
import styles from './AppShell.module.css'
import {
  storedPreference,
  storePreference,
  type ThemePreference,
  themePreferenceLabels,
  themePreferences,
} from './theme'

/** System, light or dark; remembered in this browser. */
export function ThemeSelect() {
  const id = useId()
  const [preference, setPreference] = useState(storedPreference)
  const choose = (next: ThemePreference) => {
    setPreference(next)
    storePreference(next)
  }
  return (
    // A label beside the select, not around it: the options' words stay out of its name.
    <div className={styles.theme}>
      <label htmlFor={id}>Theme</label>
      <select
        id={id}
        className={styles.themeSelect}
        value={preference}
        onChange={(event) => choose(event.target.value as ThemePreference)}
      >
        {themePreferences.map((option) => (
          <option key={option} value={option}>
            {themePreferenceLabels[option]}
          </option>
        ))}
      </select>
    </div>
  )
}
