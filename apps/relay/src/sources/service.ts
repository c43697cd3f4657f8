import { randomUUID } from 'node:crypto'
import {
  AppError,
  addressSettings,
  type Collector,
  type CollectorStats,
  type CollectorWarning,
  type CreateCollectorBody,
  type CreateJunctionBody,
  type CreateStreamBody,
  collectorAddress,
  collectorSettingsSchemas,
  type ItemHealth,
  invalidField,
  type Junction,
  keepsAccessToken,
  type Sensor,
  type SourceHealthSettings,
  type SourceHealthSettingsUpdate,
  type Stream,
  type StreamStats,
  sourceLimits,
  streamSettingsSchemas,
  type UpdateCollectorBody,
  type UpdateCollectorReply,
  type UpdateJunctionBody,
  type UpdateStreamBody,
} from '@relay/contracts'
import { type Clock, coalesce } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { createCollectorStatsView } from '../dashboard/collector-view.js'
import { streamStats } from '../dashboard/health.js'
import type { RelayDB } from '../db/schema.js'
import type { HealthAlerts } from '../health-alerts/service.js'
import { combinedHealth, type HealthSnapshot, publicHealth, stoppedHealth } from '../health-states/machine.js'
import { open, passwordKey, seal } from '../secrets/secret-box.js'
import type { Reach } from './reach.js'
import * as repo from './repo.js'
import type { SourcesRuntime } from './runtime.js'

export type SourcesDeps = {
  db: Kysely<RelayDB>
  clock: Clock
  secretKey: Buffer
  runtime: SourcesRuntime
  /** Which addresses collectors and streams may be given. */
  reach: Pick<Reach, 'refusalOfUrl'>
  /** Acknowledgements and silences, which the records carry. */
  alerts?: Pick<HealthAlerts, 'marksOf' | 'forgetItem'>
}

/** Collectors, sensors, streams and junctions: validation, secrets, and starting and stopping them. */
export function createSourcesService({ db, clock, secretKey, runtime, reach, alerts }: SourcesDeps) {
  const now = () => clock.now().toISOString()
  const collectorView = createCollectorStatsView({
    load: () => repo.listCollectors(db),
    polling: () => runtime.pollingHealth(),
    isUnlocked: (row) => runtime.isUnlocked(row),
  })
  runtime.watchCollectors((event) => collectorView.apply(event))
  /** The token of a collector whose token is sealed with the relay's key (not a password). */
  const readToken = (row: repo.CollectorRow) =>
    row.access_token && row.access_token_salt === null ? open(secretKey, row.access_token) : null

  /** A running item's health; a stopped one's, since its last change when it never ran here. */
  function healthOf(snapshot: HealthSnapshot | undefined, updatedAt: string, reason: string | null = null): ItemHealth {
    return publicHealth(snapshot ?? stoppedHealth(updatedAt, reason))
  }

  const collectorHealth = (row: repo.CollectorRow) =>
    healthOf(
      runtime.collectorHealth(row.id),
      row.updated_at,
      runtime.isUnlocked(row) ? null : 'Locked: the access token needs its password',
    )

  function toCollector(row: repo.CollectorRow): Collector {
    return {
      id: row.id,
      name: row.name,
      collectorType: row.collector_type,
      pollRateMs: row.poll_rate_ms,
      settings: JSON.parse(row.settings) as Record<string, unknown>,
      active: row.active === 1,
      running: runtime.isPolling(row.id),
      hasAccessToken: row.access_token !== null,
      externalAccessToken: row.access_token_salt !== null,
      unlocked: runtime.isUnlocked(row),
      lastFetchTime: row.last_fetch_time,
      lastFetchSuccessful: row.last_fetch_successful === 1,
      lastFetchErrorMessage: row.last_fetch_error_message,
      lastFetchTotalSensors: row.last_fetch_total_sensors,
      lastFetchNewSensors: row.last_fetch_new_sensors,
      lastFetchLostSensors: row.last_fetch_lost_sensors,
      health: collectorHealth(row),
      ...alerts?.marksOf(`collector:${row.id}`),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }
  }

  function toStream(row: repo.StreamRow): Stream {
    return {
      id: row.id,
      name: row.name,
      type: row.type,
      settings: JSON.parse(row.settings) as Record<string, unknown>,
      deviceName: row.device_name,
      screenId: row.screen_id,
      running: runtime.isStreamRunning(row.id),
      lastSentTime: row.last_sent_time,
      lastError: row.last_error,
      health: healthOf(runtime.streamHealthOf(row.id), row.updated_at),
      ...alerts?.marksOf(`stream:${row.id}`),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }
  }

  async function toJunctions(rows: repo.JunctionRow[]): Promise<Junction[]> {
    const links = await repo.findLinks(
      db,
      rows.map((row) => row.id),
    )
    const names = await repo.namesOf(db, [...links.values()])
    return rows.map((row) => {
      const { collectorIds, targets } = links.get(row.id) ?? { collectorIds: [], targets: [] }
      return {
        id: row.id,
        name: row.name,
        status: row.status,
        autoStart: row.auto_start === 1,
        collectorIds,
        targets,
        lastError: row.last_error,
        health: junctionHealth(row, { collectorIds, targets }, names),
        ...alerts?.marksOf(`junction:${row.id}`),
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      }
    })
  }

  /** Idle is `stopped` (with why it cannot run, if so); running is the worst of its parts. */
  function junctionHealth(row: repo.JunctionRow, links: repo.JunctionLinks, names: Map<string, string>): ItemHealth {
    if (row.status !== 'Running') {
      return healthOf(undefined, row.updated_at, incompleteLinks(links)?.message ?? row.last_error)
    }
    const parts = [
      ...links.collectorIds.map((id) => ({
        name: names.get(id) ?? id,
        health: healthOf(runtime.collectorHealth(id), row.updated_at),
      })),
      ...links.targets.map(({ streamId }) => ({
        name: names.get(streamId) ?? streamId,
        health: healthOf(runtime.streamHealthOf(streamId), row.updated_at),
      })),
    ]
    return combinedHealth(parts, row.updated_at)
  }

  const collectorRow = async (id: string) => found(await repo.findCollector(db, id), 'Collector', id)

  const streamRow = async (id: string) => found(await repo.findStream(db, id), 'Stream', id)

  const junctionRow = async (id: string) => found(await repo.findJunction(db, id), 'Junction', id)

  async function linksOf(id: string): Promise<repo.JunctionLinks> {
    return (await repo.findLinks(db, [id])).get(id) ?? { collectorIds: [], targets: [] }
  }

  async function sealToken(token: string, password: string | undefined) {
    if (!password) {
      return { access_token: seal(secretKey, token), access_token_salt: null }
    }
    const { key, salt } = await passwordKey(password)
    return { access_token: seal(key, token), access_token_salt: salt.toString('base64url') }
  }

  /** A new row's id and creation time. */
  function newRow() {
    const at = now()
    return { id: randomUUID(), created_at: at, updated_at: at }
  }

  /**
   * The settings a change leaves: the given ones, else the saved ones unless the type changed, checked
   * against the type's schema, and for reach when they are new.
   */
  function changedSettings(
    schema: TSchema,
    given: Record<string, unknown> | undefined,
    saved: { settings: string; typeChanged: boolean } | undefined,
  ): Record<string, unknown> {
    const keep = saved && !given && !saved.typeChanged
    const settings = checkSettings(
      schema,
      given ?? (keep ? (JSON.parse(saved.settings) as Record<string, unknown>) : {}),
    )
    return keep ? settings : checkReach(settings)
  }

  /** Refuses a URL in the settings whose host is a link-local or metadata address (unless allowed). */
  function checkReach(settings: Record<string, unknown>): Record<string, unknown> {
    for (const key of addressSettings) {
      const value = settings[key]
      const refusal = typeof value === 'string' ? reach.refusalOfUrl(value) : undefined
      if (refusal) {
        throw new AppError('INVALID_REQUEST', refusal, {
          details: [{ path: `body/settings/${key}`, message: refusal }],
        })
      }
    }
    return settings
  }

  async function checkLinks(body: Partial<CreateJunctionBody>, saved?: repo.JunctionLinks) {
    const incomplete = incompleteLinks({
      collectorIds: body.collectorIds ?? saved?.collectorIds ?? [],
      targets: body.targets ?? saved?.targets ?? [],
    })
    if (incomplete) {
      throw invalidField(incomplete.field, incomplete.message)
    }
    const collectorIds = body.collectorIds ?? []
    const streamIds = (body.targets ?? []).map((target) => target.streamId)
    if (new Set(streamIds).size !== streamIds.length) {
      throw invalidField('targets', 'lists a stream more than once')
    }
    const collectors = await repo.existingIds(db, 'collectors', collectorIds)
    const streams = await repo.existingIds(db, 'streams', streamIds)
    const missing = [
      ...collectorIds.filter((id) => !collectors.has(id)).map((id) => `collector ${id}`),
      ...streamIds.filter((id) => !streams.has(id)).map((id) => `stream ${id}`),
    ]
    if (missing.length > 0) {
      throw invalidField(
        missing[0]?.startsWith('collector') ? 'collectorIds' : 'targets',
        `refers to unknown ${missing.join(', ')}`,
      )
    }
  }

  return {
    // Collectors ---------------------------------------------------------------------------------

    async listCollectors(): Promise<Collector[]> {
      return (await repo.listCollectors(db)).map(toCollector)
    },

    async getCollector(id: string): Promise<Collector> {
      return toCollector(await collectorRow(id))
    },

    async createCollector(body: CreateCollectorBody): Promise<Collector> {
      const settings = changedSettings(collectorSettingsSchemas[body.collectorType], body.settings, undefined)
      if (body.accessTokenPassword && !body.accessToken) {
        throw invalidField('accessTokenPassword', 'needs an accessToken to protect')
      }
      const { id, ...created } = newRow()
      await repo.insertCollector(db, {
        id,
        ...created,
        name: body.name,
        collector_type: body.collectorType,
        poll_rate_ms: body.pollRateMs ?? sourceLimits.pollRate.default,
        settings: JSON.stringify(settings),
        ...(body.accessToken ? await sealToken(body.accessToken, body.accessTokenPassword) : {}),
      })
      if (body.accessToken && body.accessTokenPassword) {
        // The person who just typed the password has unlocked it for this run.
        runtime.unlock(id, body.accessToken)
      }
      const row = await collectorRow(id)
      collectorView.saved(row)
      return toCollector(row)
    },

    async updateCollector(id: string, body: UpdateCollectorBody): Promise<UpdateCollectorReply> {
      const row = await collectorRow(id)
      const type = body.collectorType ?? row.collector_type
      const typeChanged = type !== row.collector_type
      const saved = JSON.parse(row.settings) as Record<string, unknown>
      const settings = changedSettings(collectorSettingsSchemas[type], body.settings, {
        settings: row.settings,
        typeChanged,
      })
      if (body.accessTokenPassword && !body.accessToken) {
        throw invalidField('accessTokenPassword', 'needs an accessToken to protect')
      }
      // A token is given for one server: sent anywhere else it would hand the credential over.
      const from = collectorAddress(saved)
      const to = collectorAddress(settings)
      const tokenMoved = row.access_token !== null && body.accessToken === undefined && !keepsAccessToken(from, to)
      await repo.updateCollector(db, id, {
        name: body.name ?? row.name,
        collector_type: type,
        poll_rate_ms: body.pollRateMs ?? row.poll_rate_ms,
        settings: JSON.stringify(settings),
        ...(body.accessToken ? await sealToken(body.accessToken, body.accessTokenPassword) : {}),
        ...(body.accessToken === null || tokenMoved ? { access_token: null, access_token_salt: null } : {}),
        updated_at: now(),
      })
      if (body.accessToken !== undefined || tokenMoved) {
        runtime.forget(id)
        if (body.accessToken && body.accessTokenPassword) {
          runtime.unlock(id, body.accessToken)
        }
      }
      await runtime.restartCollector(id, readToken)
      const changed = await collectorRow(id)
      collectorView.saved(changed)
      const warnings: CollectorWarning[] = tokenMoved ? [tokenRemovedWarning(from, to)] : []
      return { ...toCollector(changed), warnings }
    },

    async deleteCollector(id: string): Promise<void> {
      await collectorRow(id)
      await repo.deleteCollector(db, id)
      collectorView.removed(id)
      runtime.forget(id)
      await runtime.syncCollector(id, readToken)
      await runtime.forgetHealth(id)
      await alerts?.forgetItem(`collector:${id}`)
    },

    async setCollectorActive(id: string, active: boolean): Promise<Collector> {
      await collectorRow(id)
      await repo.updateCollector(db, id, { active: active ? 1 : 0, updated_at: now() })
      await runtime.syncCollector(id, readToken)
      return toCollector(await collectorRow(id))
    },

    async unlockCollector(id: string, password: string): Promise<Collector> {
      const row = await collectorRow(id)
      if (!row.access_token || row.access_token_salt === null) {
        throw new AppError('CONFLICT', 'This collector has no password-protected access token')
      }
      const { key } = await passwordKey(password, Buffer.from(row.access_token_salt, 'base64url'))
      let token: string
      try {
        token = open(key, row.access_token)
      } catch {
        throw new AppError('FORBIDDEN', 'Wrong password for this collector')
      }
      runtime.unlock(id, token)
      await runtime.syncCollector(id, readToken)
      return toCollector(row)
    },

    async listSensors(collectorId: string): Promise<Sensor[]> {
      const health = collectorHealth(await collectorRow(collectorId))
      return (await repo.listSensors(db, collectorId)).map((row) => ({
        id: row.id,
        collectorId: row.collector_id,
        externalId: row.external_id,
        name: row.name,
        unit: row.unit,
        value: row.value === null ? null : (JSON.parse(row.value) as Sensor['value']),
        lastUpdated: row.last_updated,
        missing: row.missing === 1,
        health:
          row.missing === 1 && health.state !== 'stopped'
            ? {
                state: 'failing' as const,
                since: row.last_updated ?? health.since,
                reason: 'No longer reported by its collector',
                consecutiveFailures: 0,
              }
            : health,
      }))
    },

    // Streams ------------------------------------------------------------------------------------

    async listStreams(): Promise<Stream[]> {
      return (await repo.listStreams(db)).map(toStream)
    },

    async getStream(id: string): Promise<Stream> {
      return toStream(await streamRow(id))
    },

    async createStream(body: CreateStreamBody): Promise<Stream> {
      const settings = changedSettings(streamSettingsSchemas[body.type], body.settings, undefined)
      const { id, ...created } = newRow()
      await repo.insertStream(db, {
        id,
        ...created,
        name: body.name,
        type: body.type,
        settings: JSON.stringify(settings),
        device_name: body.deviceName ?? null,
        screen_id: body.screenId ?? null,
      })
      return toStream(await streamRow(id))
    },

    async updateStream(id: string, body: UpdateStreamBody): Promise<Stream> {
      const row = await streamRow(id)
      if (runtime.isStreamRunning(id)) {
        throw new AppError('CONFLICT', 'Stop the junctions that use this stream before changing it')
      }
      const type = body.type ?? row.type
      const settings = changedSettings(streamSettingsSchemas[type], body.settings, {
        settings: row.settings,
        typeChanged: type !== row.type,
      })
      await repo.updateStream(db, id, {
        name: body.name ?? row.name,
        type,
        settings: JSON.stringify(settings),
        device_name: body.deviceName === undefined ? row.device_name : body.deviceName,
        screen_id: body.screenId === undefined ? row.screen_id : body.screenId,
        updated_at: now(),
      })
      return toStream(await streamRow(id))
    },

    async deleteStream(id: string): Promise<void> {
      await streamRow(id)
      if (runtime.isStreamRunning(id)) {
        throw new AppError('CONFLICT', 'Stop the junctions that use this stream before deleting it')
      }
      await repo.deleteStream(db, id)
      await alerts?.forgetItem(`stream:${id}`)
    },

    // Junctions ----------------------------------------------------------------------------------

    async listJunctions(): Promise<Junction[]> {
      return toJunctions(await repo.listJunctions(db))
    },

    async getJunction(id: string): Promise<Junction> {
      const [junction] = await toJunctions([await junctionRow(id)])
      return junction as Junction
    },

    async createJunction(body: CreateJunctionBody): Promise<Junction> {
      await checkLinks(body)
      const { id, ...created } = newRow()
      await db.transaction().execute(async (trx) => {
        await repo.insertJunction(trx, { id, ...created, name: body.name, auto_start: body.autoStart ? 1 : 0 })
        await repo.replaceLinks(trx, id, body)
      })
      return this.getJunction(id)
    },

    async updateJunction(id: string, body: UpdateJunctionBody): Promise<Junction> {
      const row = await junctionRow(id)
      if (row.status === 'Running' && (body.collectorIds || body.targets)) {
        throw new AppError('CONFLICT', 'Stop the junction before changing its collectors or targets')
      }
      await checkLinks(body, await linksOf(id))
      await db.transaction().execute(async (trx) => {
        await repo.updateJunction(trx, id, {
          name: body.name ?? row.name,
          auto_start: body.autoStart === undefined ? row.auto_start : body.autoStart ? 1 : 0,
          updated_at: now(),
        })
        await repo.replaceLinks(trx, id, body)
      })
      return this.getJunction(id)
    },

    async deleteJunction(id: string): Promise<void> {
      const row = await junctionRow(id)
      if (row.status === 'Running') {
        await runtime.stopJunction(row, await linksOf(id), readToken)
      }
      await repo.deleteJunction(db, id)
      await alerts?.forgetItem(`junction:${id}`)
    },

    async startJunction(id: string): Promise<Junction> {
      const row = await junctionRow(id)
      const links = await linksOf(id)
      const incomplete = incompleteLinks(links)
      if (row.status !== 'Running' && incomplete) {
        throw new AppError('CONFLICT', `Junction cannot start: ${incomplete.field} ${incomplete.message}`)
      }
      if (row.status !== 'Running') {
        try {
          await runtime.startJunction(row, links, readToken)
        } catch (err) {
          throw new AppError(
            'CONFLICT',
            `Junction could not start: ${err instanceof Error ? err.message : String(err)}`,
          )
        }
      }
      return this.getJunction(id)
    },

    async stopJunction(id: string): Promise<Junction> {
      const row = await junctionRow(id)
      if (row.status === 'Running') {
        await runtime.stopJunction(row, await linksOf(id), readToken)
      }
      return this.getJunction(id)
    },

    /** At startup: junctions marked auto-start run again, started collectors poll again. */
    async resume(onError: (err: unknown, junction: repo.JunctionRow) => void): Promise<void> {
      await db.updateTable('junctions').set({ status: 'Idle' }).where('status', '=', 'Running').execute()
      for (const collector of await repo.listCollectors(db)) {
        await runtime.syncCollector(collector.id, readToken)
      }
      for (const junction of await repo.listJunctions(db)) {
        const links = await linksOf(junction.id)
        if (junction.auto_start === 1 && !incompleteLinks(links)) {
          await runtime.startJunction(junction, links, readToken).catch((err) => onError(err, junction))
        }
      }
    },

    // Statistics ---------------------------------------------------------------------------------

    /** Kept in memory and changed as collectors change: a dashboard poll reads no rows. */
    collectorStats: (): Promise<CollectorStats> => collectorView.stats(),

    /** The database was replaced (a restore): the statistics are read from it again. */
    forgetStats: () => collectorView.forget(),

    // Concurrent dashboard polls share one computation; each answer is still computed fresh, on the clock.
    streamStats: coalesce(async (): Promise<StreamStats> => {
      const running = new Set(runtime.runningStreamIds())
      const streams = (await repo.listStreams(db)).filter((row) => running.has(row.id))
      return streamStats(
        streams.map((row) => ({
          id: row.id,
          name: row.name,
          type: row.type,
          lastSentTime: row.last_sent_time,
          deviceName: row.device_name,
          screenId: row.screen_id,
        })),
        clock.now(),
        runtime.streamHealth(),
      )
    }),

    // Health settings ----------------------------------------------------------------------------

    getHealthSettings: (): Promise<SourceHealthSettings> => runtime.healthSettings.get(),

    updateHealthSettings: (changes: SourceHealthSettingsUpdate): Promise<SourceHealthSettings> =>
      runtime.healthSettings.update(changes),
  }
}

export type SourcesService = ReturnType<typeof createSourcesService>

/** Settings are checked against their type's schema here, since the schema depends on the type. */
function checkSettings(schema: TSchema, settings: Record<string, unknown>): Record<string, unknown> {
  const errors = Value.Errors(schema, settings)
  if (errors.length > 0) {
    const details = errors.map((error) => ({ path: `body/settings${error.instancePath}`, message: error.message }))
    throw new AppError(
      'INVALID_REQUEST',
      `Invalid settings: ${details.map((d) => `${d.path} ${d.message}`).join('; ')}`,
      {
        details,
      },
    )
  }
  return settings
}

function tokenRemovedWarning(from: string | undefined, to: string | undefined): CollectorWarning {
  const message =
    to === undefined
      ? `The saved access token was removed because the collector no longer connects to ${shownOrigin(from)}.`
      : `The saved access token was removed because the address now points to another server (${shownOrigin(to)}` +
        `${from ? `, not ${shownOrigin(from)}` : ''}); enter the token again to keep using it.`
  return { code: 'ACCESS_TOKEN_REMOVED', message }
}

function shownOrigin(address: string | undefined): string {
  try {
    const url = new URL(address ?? '')
    return `${url.protocol}//${url.host}`
  } catch {
    return address ?? 'no address'
  }
}

/**
 * Why a junction with these links could never stream anything, or undefined when it can. New
 * junctions are refused; one saved before that rule stays idle (its start is refused too).
 */
function incompleteLinks(links: repo.JunctionLinks): { field: string; message: string } | undefined {
  if (links.collectorIds.length === 0) {
    return {
      field: 'collectorIds',
      message: 'must list at least one collector: a junction without one has nothing to send',
    }
  }
  if (links.targets.length === 0) {
    return { field: 'targets', message: 'must list at least one stream: a junction without targets sends nowhere' }
  }
  return undefined
}

function found<T>(row: T | undefined, what: string, id: string): T {
  if (row === undefined) {
    throw new AppError('NOT_FOUND', `${what} ${id} not found`)
  }
  return row
}
