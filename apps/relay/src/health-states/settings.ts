import {
  type SourceHealthSettings,
  SourceHealthSettings as SourceHealthSettingsSchema,
  type SourceHealthSettingsUpdate,
  sourceHealthLimits,
} from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import { createAppSettings, validStored } from '../settings/service.js'

const settingKey = 'source_health'

export const defaultHealthSettings: SourceHealthSettings = {
  failuresBeforeFailing: sourceHealthLimits.failuresBeforeFailing.default,
  successesBeforeHealthy: sourceHealthLimits.successesBeforeHealthy.default,
  historyRetentionDays: sourceHealthLimits.historyRetentionDays.default,
}

/**
 * The hysteresis thresholds and how long health history is kept, saved in app_settings. Read on
 * every poll, so the saved value is kept in memory; `forget` drops it when the database was replaced.
 */
export function createHealthSettings({ db, clock }: { db: Kysely<RelayDB>; clock: Clock }) {
  const settings = createAppSettings({ db, clock })
  let cached: SourceHealthSettings | undefined

  async function read(): Promise<SourceHealthSettings> {
    const stored = await settings.find(settingKey).catch(() => undefined)
    return validStored(SourceHealthSettingsSchema, defaultHealthSettings, stored)
  }

  return {
    async get(): Promise<SourceHealthSettings> {
      cached ??= await read()
      return cached
    },

    async update(changes: SourceHealthSettingsUpdate): Promise<SourceHealthSettings> {
      const next = { ...(await read()), ...changes }
      await settings.save(settingKey, next)
      cached = next
      return next
    },

    forget(): void {
      cached = undefined
    },
  }
}

export type HealthSettings = ReturnType<typeof createHealthSettings>
