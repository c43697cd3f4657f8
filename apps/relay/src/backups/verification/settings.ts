import { defaultVerificationFrequency, VerificationSettings } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../../db/schema.js'
import { createAppSettings, validStored } from '../../settings/service.js'

const settingKey = 'backup_verification'

/**
 * How often backups are verified, saved in app_settings. Read when used (every scheduler cycle at most),
 * not kept in memory, so a restored database's value takes effect at once.
 */
export function createVerificationSettings({ db, clock }: { db: Kysely<RelayDB>; clock: Clock }) {
  const settings = createAppSettings({ db, clock })
  return {
    async get(): Promise<VerificationSettings> {
      const stored = await settings.find(settingKey)
      return validStored(VerificationSettings, { frequency: defaultVerificationFrequency }, stored)
    },
    async save(next: VerificationSettings): Promise<VerificationSettings> {
      await settings.save(settingKey, next)
      return next
    },
  }
}
