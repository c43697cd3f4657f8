import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import type { NotificationService } from '../notifications/service.js'
import type {
  CollectorDriver,
  CollectorDriverInput,
  Reading,
  StreamDriver,
  StreamDriverInput,
  StreamPayload,
} from './drivers/types.js'
import * as repo from './repo.js'

export type DriverFactories = {
  collector(input: CollectorDriverInput): CollectorDriver
  stream(input: StreamDriverInput): StreamDriver
}

export type RuntimeDeps = {
  db: Kysely<RelayDB>
  clock: Clock
  log: FastifyBaseLogger
  notifications: NotificationService
  drivers: DriverFactories
}

type Poller = { stop(): Promise<void> }
type Sender = { junctionId: string; streamId: string; stop(): Promise<void> }

/** A fetch or send that hangs gives up after this long, so one dead source cannot stall its loop. */
const requestTimeout = 30_000

/**
 * Runs what the sources model describes: one poller per collector that is started (or used by a
 * running junction) and unlocked, one sender per target stream of each running junction.
 */
export function createSourcesRuntime({ db, clock, log, notifications, drivers }: RuntimeDeps) {
  const pollers = new Map<string, Poller>()
  const senders = new Map<string, Sender>()
  /** How many senders each stream has: answers "is it running" without scanning every sender. */
  const sendersPerStream = new Map<string, number>()
  /** Tokens of password-protected collectors, held in memory only once unlocked. */
  const unlockedTokens = new Map<string, string>()
  const now = () => clock.now().toISOString()

  function loop(intervalMs: number, task: (signal: AbortSignal) => Promise<void>, close: () => Promise<void>) {
    const controller = new AbortController()
    let timer: NodeJS.Timeout | undefined
    let running: Promise<void> = Promise.resolve()
    const tick = () => {
      const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(Math.min(intervalMs * 2, requestTimeout))])
      running = task(signal).finally(() => {
        if (!controller.signal.aborted) {
          timer = setTimeout(tick, intervalMs)
        }
      })
    }
    timer = setTimeout(tick, 0)
    return {
      async stop() {
        controller.abort()
        clearTimeout(timer)
        await running.catch(() => {})
        await close()
      },
    }
  }

  async function recordFetch(collectorId: string, readings: Reading[]) {
    const at = now()
    await db.transaction().execute(async (trx) => {
      const known = await repo.listSensors(trx, collectorId)
      const present = new Set(known.filter((sensor) => sensor.missing === 0).map((sensor) => sensor.external_id))
      const reported = new Set(readings.map((reading) => reading.externalId))
      const lost = [...present].filter((id) => !reported.has(id))
      const fresh = [...reported].filter((id) => !present.has(id))
      const ids = new Map(known.map((sensor) => [sensor.external_id, sensor.id]))
      for (const reading of readings) {
        await repo.upsertSensor(trx, {
          id: ids.get(reading.externalId) ?? crypto.randomUUID(),
          collector_id: collectorId,
          external_id: reading.externalId,
          name: reading.name,
          unit: reading.unit,
          value: JSON.stringify(reading.value),
          last_updated: at,
          missing: 0,
        })
      }
      await repo.markSensorsMissing(trx, collectorId, lost)
      await repo.updateCollector(trx, collectorId, {
        last_fetch_time: at,
        last_fetch_successful: 1,
        last_fetch_error_message: null,
        last_fetch_total_sensors: reported.size,
        last_fetch_new_sensors: fresh.length,
        last_fetch_lost_sensors: lost.length,
      })
    })
  }

  async function recordFetchFailure(collectorId: string, error: unknown) {
    await repo.updateCollector(db, collectorId, {
      last_fetch_time: now(),
      last_fetch_successful: 0,
      last_fetch_error_message: messageOf(error),
      last_fetch_new_sensors: 0,
      last_fetch_lost_sensors: 0,
    })
  }

  /** Whether a collector's token can be used: no token, a token under the relay's key, or unlocked. */
  function isUnlocked(row: Pick<repo.CollectorRow, 'id' | 'access_token_salt'>): boolean {
    return row.access_token_salt === null || unlockedTokens.has(row.id)
  }

  async function shouldPoll(row: repo.CollectorRow): Promise<boolean> {
    if (row.active === 1) {
      return true
    }
    const running = await db
      .selectFrom('junction_collectors')
      .innerJoin('junctions', 'junctions.id', 'junction_collectors.junction_id')
      .select('junctions.id')
      .where('junction_collectors.collector_id', '=', row.id)
      .where('junctions.status', '=', 'Running')
      .executeTakeFirst()
    return running !== undefined
  }

  /** Starts or stops the poller of one collector to match its row; call after any change to it. */
  async function syncCollector(id: string, readToken: (row: repo.CollectorRow) => string | null): Promise<void> {
    const row = await repo.findCollector(db, id)
    const wanted = row !== undefined && isUnlocked(row) && (await shouldPoll(row))
    const existing = pollers.get(id)
    if (existing && (!wanted || row === undefined)) {
      pollers.delete(id)
      await existing.stop()
      return
    }
    if (!wanted || existing || row === undefined) {
      return
    }
    const driver = drivers.collector({
      id: row.id,
      name: row.name,
      collectorType: row.collector_type,
      pollRateMs: row.poll_rate_ms,
      settings: JSON.parse(row.settings) as Record<string, unknown>,
      accessToken: unlockedTokens.get(row.id) ?? readToken(row),
    })
    const collectorLog = log.child({ collectorId: id })
    pollers.set(
      id,
      loop(
        row.poll_rate_ms,
        async (signal) => {
          try {
            await recordFetch(id, await driver.fetch(signal))
          } catch (err) {
            if (!signal.aborted || signal.reason?.name === 'TimeoutError') {
              collectorLog.warn({ err: messageOf(err) }, 'collector fetch failed')
              await recordFetchFailure(id, err).catch(() => {})
            }
          }
        },
        () => driver.close(),
      ),
    )
  }

  async function payloadFor(
    junction: repo.JunctionRow,
    stream: repo.StreamRow,
    collectorIds: string[],
  ): Promise<StreamPayload> {
    const sensors = await repo.listSensorsOf(db, collectorIds)
    return {
      junctionId: junction.id,
      junctionName: junction.name,
      deviceName: stream.device_name,
      screenId: stream.screen_id,
      sentAt: now(),
      sensors: sensors.map((sensor) => ({
        collectorId: sensor.collector_id,
        id: sensor.external_id,
        name: sensor.name,
        unit: sensor.unit,
        value: sensor.value === null ? null : (JSON.parse(sensor.value) as StreamPayload['sensors'][number]['value']),
        lastUpdated: sensor.last_updated,
      })),
    }
  }

  function startSender(junction: repo.JunctionRow, stream: repo.StreamRow, sendRateMs: number, collectorIds: string[]) {
    const driver = drivers.stream({
      id: stream.id,
      name: stream.name,
      type: stream.type,
      deviceName: stream.device_name,
      screenId: stream.screen_id,
      settings: JSON.parse(stream.settings) as Record<string, unknown>,
    })
    const streamLog = log.child({ junctionId: junction.id, streamId: stream.id })
    let failing = false
    const sender = loop(
      sendRateMs,
      async (signal) => {
        try {
          await driver.send(await payloadFor(junction, stream, collectorIds), signal)
          await repo.updateStream(db, stream.id, { last_sent_time: now(), last_error: null })
          failing = false
        } catch (err) {
          if (signal.aborted && signal.reason?.name !== 'TimeoutError') {
            return
          }
          await repo.updateStream(db, stream.id, { last_error: messageOf(err) }).catch(() => {})
          // One notification when a stream starts failing, not one per attempt.
          if (!failing) {
            failing = true
            streamLog.warn({ err: messageOf(err) }, 'stream send failed')
            await notifications
              .notify('junctionError', {
                message: `${junction.name}: sending to ${stream.name} failed: ${messageOf(err)}`,
              })
              .catch(() => {})
          }
        }
      },
      () => driver.close(),
    )
    senders.set(`${junction.id}/${stream.id}`, { junctionId: junction.id, streamId: stream.id, stop: sender.stop })
    sendersPerStream.set(stream.id, (sendersPerStream.get(stream.id) ?? 0) + 1)
  }

  async function stopSenders(junctionId: string) {
    const mine = [...senders.entries()].filter(([, sender]) => sender.junctionId === junctionId)
    for (const [key, { streamId }] of mine) {
      senders.delete(key)
      const left = (sendersPerStream.get(streamId) ?? 1) - 1
      if (left > 0) {
        sendersPerStream.set(streamId, left)
      } else {
        sendersPerStream.delete(streamId)
      }
    }
    await Promise.all(mine.map(([, sender]) => sender.stop()))
  }

  return {
    isPolling: (collectorId: string) => pollers.has(collectorId),
    activePollers: () => pollers.size,
    isStreamRunning: (streamId: string) => sendersPerStream.has(streamId),
    runningStreamIds: () => [...sendersPerStream.keys()],
    isUnlocked,
    syncCollector,

    /** A running poller keeps the settings it started with: replace it after the collector changed. */
    async restartCollector(id: string, readToken: (row: repo.CollectorRow) => string | null): Promise<void> {
      const existing = pollers.get(id)
      pollers.delete(id)
      await existing?.stop()
      await syncCollector(id, readToken)
    },

    unlock(collectorId: string, token: string) {
      unlockedTokens.set(collectorId, token)
    },

    forget(collectorId: string) {
      unlockedTokens.delete(collectorId)
    },

    /** Marks the junction Running, starts its collectors and one sender per target. */
    async startJunction(
      junction: repo.JunctionRow,
      links: repo.JunctionLinks,
      readToken: (row: repo.CollectorRow) => string | null,
    ): Promise<void> {
      await stopSenders(junction.id)
      await repo.updateJunction(db, junction.id, { status: 'Running', last_error: null, updated_at: now() })
      try {
        for (const collectorId of links.collectorIds) {
          await syncCollector(collectorId, readToken)
        }
        for (const target of links.targets) {
          const stream = await repo.findStream(db, target.streamId)
          if (stream) {
            startSender(junction, stream, target.sendRateMs, links.collectorIds)
          }
        }
      } catch (err) {
        await stopSenders(junction.id)
        await repo.updateJunction(db, junction.id, { status: 'Idle', last_error: messageOf(err), updated_at: now() })
        for (const collectorId of links.collectorIds) {
          await syncCollector(collectorId, readToken)
        }
        await notifications.notify('junctionError', { message: `${junction.name} could not start: ${messageOf(err)}` })
        throw err
      }
      await notifications.notify('junctionStarted', { message: `${junction.name} is running` })
    },

    async stopJunction(
      junction: repo.JunctionRow,
      links: repo.JunctionLinks,
      readToken: (row: repo.CollectorRow) => string | null,
    ) {
      await stopSenders(junction.id)
      await repo.updateJunction(db, junction.id, { status: 'Idle', updated_at: now() })
      for (const collectorId of links.collectorIds) {
        await syncCollector(collectorId, readToken)
      }
      await notifications.notify('junctionStopped', { message: `${junction.name} stopped` })
    },

    /** Stops everything; the rows keep their state so the next start can resume. */
    async close() {
      const all = [...pollers.values(), ...senders.values()]
      pollers.clear()
      senders.clear()
      sendersPerStream.clear()
      await Promise.all(all.map((item) => item.stop()))
    },
  }
}

export type SourcesRuntime = ReturnType<typeof createSourcesRuntime>

export function messageOf(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : ''
    return `${err.message}${cause}`.slice(0, 500)
  }
  return String(err).slice(0, 500)
}
