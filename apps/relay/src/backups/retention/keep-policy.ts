import {
  AppError,
  defaultKeepPolicy,
  type KeepPolicy,
  type KeepPolicyChange,
  KeepPolicy as KeepPolicySchema,
  keepNothingMessage,
  keepRules,
} from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../../db/schema.js'
import { createAppSettings, validStored } from '../../settings/service.js'

const settingKey = 'backup_keep_policy'

const keepsSomething = (policy: KeepPolicy) => keepRules.some((rule) => policy[rule] > 0)

/**
 * The keep policy, saved in app_settings. Read from the database each time (a backup reads it twice),
 * so a restore that replaces the database brings its own policy with it.
 */
export function createKeepPolicy({ db, clock }: { db: Kysely<RelayDB>; clock: Clock }) {
  const settings = createAppSettings({ db, clock })

  async function get(): Promise<KeepPolicy> {
    const stored = validStored(KeepPolicySchema, { ...defaultKeepPolicy }, await settings.find(settingKey))
    return keepsSomething(stored) ? stored : { ...defaultKeepPolicy }
  }

  return {
    get,

    /** Saves the change; a policy that would keep nothing is refused, naming the counts the change set. */
    async update(change: KeepPolicyChange): Promise<KeepPolicy> {
      const next = { ...(await get()), ...change }
      if (!keepsSomething(next)) {
        const details = Object.keys(change).map((rule) => ({ path: `body/${rule}`, message: keepNothingMessage }))
        throw new AppError('INVALID_REQUEST', keepNothingMessage, { details })
      }
      await settings.save(settingKey, next)
      return next
    },
  }
}

export type KeepPolicyStore = ReturnType<typeof createKeepPolicy>
