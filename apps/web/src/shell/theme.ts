/**
 * Light or dark: the user's stored choice, or the system's when they chose "system" (the default).
 * The chosen theme is set as data-theme on <html>, where styles.css switches its colours.
 *
 * index.html repeats resolveTheme in a small inline script, so the stored theme applies before the
 * first paint instead of flashing light; theme.test.ts checks that the two agree.
 */

export const themePreferences = ['system', 'light', 'dark'] as const
export type ThemePreference = (typeof themePreferences)[number]
export type Theme = 'light' | 'dark'

export const themePreferenceLabels = {
  system: 'System',
  light: 'Light',
  dark: 'Dark',
} satisfies Record<ThemePreference, string>

export const themeStorageKey = 'relay.theme'
export const darkSchemeQuery = '(prefers-color-scheme: dark)'

export function parsePreference(stored: string | null): ThemePreference {
  return themePreferences.find((preference) => preference === stored) ?? 'system'
}

export function resolveTheme(preference: ThemePreference, systemPrefersDark: boolean): Theme {
  if (preference === 'system') {
    return systemPrefersDark ? 'dark' : 'light'
  }
  return preference
}

/** The stored choice; "system" where storage is unavailable (e.g. blocked cookies). */
export function storedPreference(): ThemePreference {
  try {
    return parsePreference(localStorage.getItem(themeStorageKey))
  } catch {
    return 'system'
  }
}

export function applyTheme(preference: ThemePreference): void {
  document.documentElement.dataset.theme = resolveTheme(preference, matchMedia(darkSchemeQuery).matches)
}

export function storePreference(preference: ThemePreference): void {
  try {
    localStorage.setItem(themeStorageKey, preference)
  } catch {
    // Applied for this page all the same; it just will not be remembered.
  }
  applyTheme(preference)
}

/** Follows the system's light or dark while the stored choice is "system". */
export function followSystemTheme(): void {
  matchMedia(darkSchemeQuery).addEventListener('change', () => applyTheme(storedPreference()))
}
