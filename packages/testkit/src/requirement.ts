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
