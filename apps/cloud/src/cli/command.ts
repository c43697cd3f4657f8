import type { ParseArgsConfig } from 'node:util'
import type { CloudConfig } from '../config.js'
import type { CloudDatabase } from '../db/database.js'

export type CliContext = {
  config: CloudConfig
  /** The migrated cloud database, opened on first use. */
  database(): Promise<CloudDatabase>
  out(line: string): void
}

export type CliValues = Record<string, string | boolean | (string | boolean)[] | undefined>

/** One operator command, e.g. `users add`; `options` are parsed with node:util parseArgs. */
export type Command = {
  name: string
  usage: string
  help: string
  options?: ParseArgsConfig['options']
  run(context: CliContext, values: CliValues, positionals: string[]): Promise<void>
}

/** A mistake in how a command was called: reported with its usage, exit code 2. */
export class UsageError extends Error {}

export function required(values: CliValues, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value.trim() === '') {
    throw new UsageError(`--${name} is required`)
  }
  return value
}
