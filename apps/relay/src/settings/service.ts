import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
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
