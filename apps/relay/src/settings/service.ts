import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'
import type { RelayDB } from '../db/schema.js'
import { findSetting, saveSetting } from './repo.js'

/** The relay's stored settings: one JSON value per key, for the features that keep settings. */
export function createAppSettings({ db, clock }: { db: Kysely<RelayDB>; clock: Clock }) {
  return {
    /** The value saved under `key`, or undefined when none is. */
    find: (key: string): Promise<unknown> => findSetting(db, key),
    save: (key: string, value: unknown): Promise<void> => saveSetting(db, key, value, clock.now()),
  }
}

export type AppSettings = ReturnType<typeof createAppSettings>

/**
 * `defaults` overridden by each stored value that is still valid on its own against `schema`: a
 * value removed or narrowed since it was saved is ignored, the rest are kept.
 */
export function validStored<T extends Record<string, unknown>>(schema: TSchema, defaults: T, stored: unknown): T {
  const result = { ...defaults }
  if (stored && typeof stored === 'object' && !Array.isArray(stored)) {
    for (const [name, value] of Object.entries(stored)) {
      const candidate = { ...result, [name]: value }
      if (Value.Check(schema, candidate)) {
        Object.assign(result, candidate)
      }
    }
  }
  return result
}
