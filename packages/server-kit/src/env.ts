import type { Static, TObject } from 'typebox'
import { Value } from 'typebox/value'

/** Startup fails with one of these, naming every bad key at once. */
export class ConfigError extends Error {
  readonly problems: readonly string[]

  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`)
    this.name = 'ConfigError'
    this.problems = problems
  }
}

/**
 * Reads the keys of `schema` from an environment: empty strings count as unset, defaults are applied,
 * strings are converted to the schema's types, and every failing key is reported together.
 */
export function parseEnv<T extends TObject>(schema: T, env: Record<string, string | undefined>): Static<T> {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(schema.properties)) {
    const value = env[key]
    if (value !== undefined && value.trim() !== '') {
      raw[key] = value.trim()
    }
  }
  const value = Value.Convert(schema, Value.Default(schema, raw))
  const problems = Value.Errors(schema, value).map((error) => {
    const key = error.instancePath.replace(/^\//, '') || requiredKey(error.params)
    const given = key in raw ? ` (got "${String(raw[key])}")` : ''
    return `${key}: ${error.message}${given}`
  })
  if (problems.length > 0) {
    throw new ConfigError([...new Set(problems)])
  }
  return value as Static<T>
}

function requiredKey(params: object): string {
  const required = (params as { requiredProperties?: string[] }).requiredProperties
  return required?.join(', ') ?? '(config)'
}

export const LogLevel = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
