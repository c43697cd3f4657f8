import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'

/** The widths every page is checked at: a phone and a desktop. */
export const checkedViewports = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1440, height: 900 },
] as const

export const checkedColorSchemes = ['light', 'dark'] as const
export type ColorScheme = (typeof checkedColorSchemes)[number]

/** WCAG 2.1 A and AA: what the pages promise. */
const wcagTags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']

let axeSource: string | undefined

/** axe-core's browser build, injected into the page under test. */
function loadAxe(): string {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
  return axeSource
}

/**
 * The few browser globals the checks below use; testkit compiles without the DOM library, and the
 * functions passed to page.evaluate run in the page, not here.
 */
type AxeViolation = { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }
type PageGlobals = {
  requestAnimationFrame: (callback: () => void) => void
  axe?: { run: (context: unknown, options: unknown) => Promise<{ violations: AxeViolation[] }> }
  innerWidth: number
  document: {
    scrollingElement: { scrollWidth: number } | null
    documentElement: { scrollWidth: number }
    getAnimations: () => {
      effect: { getComputedTiming: () => { iterations?: number } } | null
      finished: Promise<unknown>
    }[]
  }
}

export type AxeFinding = { rule: string; impact: string; help: string; targets: string[] }

/** axe-core's serious and critical WCAG A/AA violations on the page as it is now. */
export async function seriousAxeViolations(page: Page): Promise<AxeFinding[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) {
    await page.addScriptTag({ content: loadAxe() })
  }
  const findings = await page.evaluate(async (tags) => {
    const { axe, document } = globalThis as unknown as PageGlobals
    if (!axe) {
      throw new Error('axe-core did not load in the page')
    }
    const result = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] })
    return result.violations.map((violation) => ({
      rule: violation.id,
      impact: violation.impact ?? 'unknown',
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.map(String).join(' ')),
    }))
  }, wcagTags)
  return findings.filter((finding) => finding.impact === 'serious' || finding.impact === 'critical')
}

/** How far the page scrolls sideways past the viewport, in CSS pixels; 0 when it fits. */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const { document, innerWidth } = globalThis as unknown as PageGlobals
    const scroller = document.scrollingElement ?? document.documentElement
    return Math.max(0, scroller.scrollWidth - innerWidth)
  })
}

/**
 * Waits for two rendering frames (media query listeners run in the first) and then for transitions
 * and finite animations to end, so colours are measured as they rest.
 */
export async function finishedAnimations(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const { document, requestAnimationFrame } = globalThis as unknown as PageGlobals
    for (let frame = 0; frame < 2; frame++) {
      await new Promise<void>((resolve) => requestAnimationFrame(resolve))
    }
    const running = document
      .getAnimations()
      .filter((animation) => animation.effect?.getComputedTiming().iterations !== Number.POSITIVE_INFINITY)
    await Promise.all(running.map((animation) => animation.finished.catch(() => undefined)))
  })
}

export type LayoutProblem = { where: string; problem: string }

/**
 * Checks the open page at each checked width in each colour scheme: no serious or critical axe
 * violation, and on a phone nothing wider than the screen.
 * `settle` runs after each change, e.g. to wait until the page has applied the colour scheme.
 */
export async function checkPageEverywhere(
  page: Page,
  settle: (colorScheme: ColorScheme) => Promise<void> = async () => {},
): Promise<LayoutProblem[]> {
  const problems: LayoutProblem[] = []
  for (const viewport of checkedViewports) {
    await page.setViewportSize({ width: viewport.width, height: viewport.height })
    for (const colorScheme of checkedColorSchemes) {
      await page.emulateMedia({ colorScheme })
      await settle(colorScheme)
      await finishedAnimations(page)
      const where = `${new URL(page.url()).pathname}${new URL(page.url()).search} at ${viewport.width} px, ${colorScheme}`
      if (viewport.name === 'phone') {
        const overflow = await horizontalOverflow(page)
        if (overflow > 0) {
          problems.push({ where, problem: `scrolls sideways by ${overflow} px` })
        }
      }
      for (const finding of await seriousAxeViolations(page)) {
        problems.push({
          where,
          problem: `${finding.impact} ${finding.rule} (${finding.help}): ${finding.targets.slice(0, 5).join(', ')}`,
        })
      }
    }
  }
  return problems
}
