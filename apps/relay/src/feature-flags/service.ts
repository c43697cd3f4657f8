import { FeatureFlags, type FeatureFlagsUpdate, featureFlagDefaults } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import { Value } from 'typebox/value'
import type { RelayDB } from '../db/schema.js'
import { createAppSettings } from '../settings/service.js'

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
    const flags: FeatureFlags = { ...featureFlagDefaults }
    if (stored && typeof stored === 'object') {
      // Keep each stored flag that is still valid on its own; a flag removed or narrowed later is ignored.
      for (const [name, value] of Object.entries(stored)) {
        const candidate = { ...flags, [name]: value }
        if (Value.Check(FeatureFlags, candidate)) {
          Object.assign(flags, candidate)
        }
      }
    }
    return flags
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
