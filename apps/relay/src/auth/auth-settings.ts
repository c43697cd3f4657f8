import { type AuthMode, authModes } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import { createAppSettings } from '../settings/service.js'

const settingKey = 'auth'

export type AuthSettings = { mode: AuthMode; setupComplete: boolean }

const fresh: AuthSettings = { mode: 'none', setupComplete: false }

/**
 * The auth mode and whether first-run setup is done. Read once at start and kept in memory: the
 * guard asks for the mode on every request, and every change goes through `save`.
 */
export async function loadAuthSettings({ db, clock }: { db: Kysely<RelayDB>; clock: Clock }) {
  const settings = createAppSettings({ db, clock })
  const read = async (): Promise<AuthSettings> => {
    const stored = (await settings.find(settingKey)) as Partial<AuthSettings> | undefined
    return stored && authModes.includes(stored.mode as AuthMode)
      ? { mode: stored.mode as AuthMode, setupComplete: stored.setupComplete === true }
      : fresh
  }
  let current = await read()
  return {
    get: (): AuthSettings => current,
    /** Reads the settings again (the database was replaced by a restore). */
    async reload(): Promise<void> {
      current = await read()
    },
    async save(mode: AuthMode): Promise<void> {
      const next = { mode, setupComplete: true }
      await settings.save(settingKey, next)
      current = next
    },
  }
}

export type AuthSettingsStore = Awaited<ReturnType<typeof loadAuthSettings>>
