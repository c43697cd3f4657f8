import { useCallback, useState } from 'react'

/** A boolean kept in localStorage as `true` or `false`; `fallback` until one is stored. */
export function useStoredBoolean(key: string, fallback: boolean): [boolean, (value: boolean) => void] {
  const [value, setValue] = useState(() => read(key) ?? fallback)
  const store = useCallback(
    (next: boolean) => {
      setValue(next)
      try {
        localStorage.setItem(key, String(next))
      } catch {
        // Storage disabled or full: the state still applies until the page is left.
      }
    },
    [key],
  )
  return [value, store]
}

function read(key: string): boolean | undefined {
  try {
    const stored = localStorage.getItem(key)
    return stored === 'true' ? true : stored === 'false' ? false : undefined
  } catch {
    return undefined
  }
}
