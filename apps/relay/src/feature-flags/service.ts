import { FeatureFlags, type FeatureFlagsUpdate, featureFlagDefaults } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import { createAppSettings, validStored } from '../settings/service.js'

const settingKey = 'feature_flags'

export type FeatureFlagDeps = { db: Kysely<RelayDB>; clock: Clock; log: FastifyBaseLogger }

/** The ten flags: the spec's defaults, overridden by what the user saved. */
export function createFeatureFlagService({ db, clock, log }: FeatureFlagDeps) {
  const settings = createAppSettings({ db, clock })
  async function read(): Promise<FeatureFlags> {
    let stored: unknown
    try {
      stored = await settings.find(settingKey)
    } catch (err) {
      log.warn({ err }, 'stored feature flags are unreadable; using defaults')
    }
    return validStored<FeatureFlags>(FeatureFlags, featureFlagDefaults, stored)
  }

  return {
    get: read,

    async update(changes: FeatureFlagsUpdate): Promise<FeatureFlags> {
      const flags = { ...(await read()), ...changes }
      await settings.save(settingKey, flags)
      return flags
    },
  }
}

export type FeatureFlagService = ReturnType<typeof createFeatureFlagService>
