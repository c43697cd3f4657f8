import { readFileSync } from 'node:fs'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { parsePreference, resolveTheme, themeStorageKey } from './theme'

const indexHtml = readFileSync(new URL('../../index.html', import.meta.url), 'utf8')
const inlineScript = /<script>([\s\S]*?)<\/script>/.exec(indexHtml)?.[1] ?? ''

/** Runs index.html's inline script as a browser would before the first paint, and returns the theme it set. */
function themeBeforeFirstPaint(stored: string | null | 'unreadable', systemPrefersDark: boolean): string | undefined {
  const dataset: Record<string, string> = {}
  runInNewContext(inlineScript, {
    localStorage: {
      getItem(key: string) {
        if (stored === 'unreadable') {
          throw new Error('storage is blocked')
        }
        return key === themeStorageKey ? stored : null
      },
    },
    matchMedia: (query: string) => ({ matches: query === '(prefers-color-scheme: dark)' && systemPrefersDark }),
    document: { documentElement: { dataset } },
  })
  return dataset.theme
}

describe('theme', () => {
  it('follows the system unless light or dark was chosen', () => {
    expect(resolveTheme('system', true)).toBe('dark')
    expect(resolveTheme('system', false)).toBe('light')
    expect(resolveTheme('light', true)).toBe('light')
    expect(resolveTheme('dark', false)).toBe('dark')
  })

  it('reads anything but a known choice as "system"', () => {
    expect(parsePreference('dark')).toBe('dark')
    expect(parsePreference(null)).toBe('system')
    expect(parsePreference('sepia')).toBe('system')
  })

  it("sets the same theme before the first paint as the app does once it runs, index.html's script included", () => {
    expect(inlineScript).toContain(themeStorageKey)
    for (const stored of [null, 'system', 'light', 'dark', 'sepia']) {
      for (const systemPrefersDark of [false, true]) {
        expect(themeBeforeFirstPaint(stored, systemPrefersDark), `${stored}, system dark ${systemPrefersDark}`).toBe(
          resolveTheme(parsePreference(stored), systemPrefersDark),
        )
      }
    }
    expect(themeBeforeFirstPaint('unreadable', true)).toBe('dark')
  })
})
