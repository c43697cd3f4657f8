/** In CI every test must run: a missing dependency fails the run instead of skipping tests. */
export const isCI = process.env.CI === 'true'

export type Requirement = { available: boolean; reason: string }

/**
 * Decides whether tests that need `name` run. Outside CI a missing dependency skips them with a
 * printed reason; with CI=true it throws, so a green CI run never hides skipped tests.
 */
export function requirement(name: string, problem: string | undefined): Requirement {
  if (problem === undefined) {
    return { available: true, reason: '' }
  }
  if (isCI) {
    throw new Error(`${name} is required when CI=true: ${problem}`)
  }
  console.warn(`[skip] ${name} tests skipped: ${problem}`)
  return { available: false, reason: problem }
}

/** The value, or a thrown error naming what was missing: for test steps that need it to go on. */
export function defined<T>(value: T | null | undefined, what = 'value'): T {
  if (value === null || value === undefined) {
    throw new Error(`expected a ${what}, got ${value}`)
  }
  return value
}
