import { type CollectorType, excludedCollectorType, healthThresholds } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import type { HealthAlertHooks } from '../health-alerts/service.js'
import type { HealthObserver, OutcomeSample } from '../health-history/recorder.js'
import { createHealthBoard, type HealthChange } from '../health-states/board.js'
import type { Outcome } from '../health-states/machine.js'
import { createHealthSettings } from '../health-states/settings.js'
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
  /** Told every outcome and change of state: the health history. */
  history?: HealthObserver
  /** Asked before notifying: silences, and acknowledgements that end with an episode. */
  alerts?: HealthAlertHooks
}

type Poller = { collectorType: CollectorType; stop(): Promise<void> }

/** A fetch's results as saved on the collector's row. */
export type FetchRecord = Pick<
  repo.CollectorRow,
  | 'last_fetch_time'
  | 'last_fetch_successful'
  | 'last_fetch_error_message'
  | 'last_fetch_new_sensors'
  | 'last_fetch_lost_sensors'
> &
  Partial<Pick<repo.CollectorRow, 'last_fetch_total_sensors'>>

/**
 * What the runtime changed about a collector, for views kept in memory (the dashboard statistics):
 * a fetch saved its results, or its token was unlocked or forgotten.
 */
export type CollectorEvent = { kind: 'fetched'; id: string; saved: FetchRecord } | { kind: 'unlock'; id: string }

type Sender = { junctionId: string; streamId: string; stop(): Promise<void> }

/** A fetch or send that hangs gives up after this long, so one dead source cannot stall its loop. */
const requestTimeout = 30_000

/**
 * Runs what the sources model describes: one poller per collector that is started (or used by a
 * running junction) and unlocked, one sender per target stream of each running junction.
 */
export function createSourcesRuntime({ db, clock, log, notifications, drivers, history, alerts }: RuntimeDeps) {
  const pollers = new Map<string, Poller>()
  /** The EventEngine pollers, which the statistics leave out: usually none, so they are cheap to subtract. */
  const internalPollers = new Set<string>()
  const collectorWatchers = new Set<(event: CollectorEvent) => void>()
  const senders = new Map<string, Sender>()
  /** How many senders each stream has: answers "is it running" without scanning every sender. */
  const sendersPerStream = new Map<string, number>()
  /** Tokens of password-protected collectors, held in memory only once unlocked. */
  const unlockedTokens = new Map<string, string>()
  const now = () => clock.now().toISOString()
  const health = createHealthBoard({ clock, onChange: history?.changed })
  const healthSettings = createHealthSettings({ db, clock })
  const collectorKey = (id: string) => `collector:${id}`
  const streamKey = (id: string) => `stream:${id}`

  /**
   * Feeds one outcome to the item's health and notifies on what changed: entering `failing` raises a
   * notification (a failure while still failing updates that same one), leaving it through successes
   * resolves it and raises a recovery notice. A silenced item does neither, though its open
   * notification is still resolved.
   */
  async function recordOutcome(
    key: string,
    outcome: Outcome,
    report: { failing: (change: HealthChange) => Promise<unknown>; recovered: string },
    sample: OutcomeSample,
  ) {
    const change = health.record(key, outcome, await healthSettings.get())
    history?.outcome(key, outcome, sample)
    const notify = (await alerts?.changed(key, change)) ?? true
    if (!outcome.ok && change.after.state === 'failing') {
      if (notify) {
        await report.failing(change)
      }
    } else if (change.before.state === 'failing' && change.after.state !== 'failing') {
      await notifications.resolve(key)
      if (notify) {
        await notifications.notify('sourceRecovered', { message: report.recovered })
      }
    }
  }

  /** A stopped item has no failure left to report: its open notification is resolved, quietly. */
  async function stopHealth(key: string) {
    if (health.stop(key)?.state === 'failing') {
      await notifications.resolve(key)
    }
  }

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

  function announce(event: CollectorEvent) {
    for (const watcher of collectorWatchers) {
      watcher(event)
    }
  }

  function addPoller(id: string, poller: Poller) {
    pollers.set(id, poller)
    if (poller.collectorType === excludedCollectorType) {
      internalPollers.add(id)
    }
  }

  function removePoller(id: string): Poller | undefined {
    const poller = pollers.get(id)
    pollers.delete(id)
    internalPollers.delete(id)
    return poller
  }

  /** Saves what a fetch read; returns how many sensors it lost. */
  async function recordFetch(collectorId: string, readings: Reading[]): Promise<number> {
    const at = now()
    const saved = await db.transaction().execute(async (trx) => {
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
      const record: FetchRecord = {
        last_fetch_time: at,
        last_fetch_successful: 1,
        last_fetch_error_message: null,
        last_fetch_total_sensors: reported.size,
        last_fetch_new_sensors: fresh.length,
        last_fetch_lost_sensors: lost.length,
      }
      await repo.updateCollector(trx, collectorId, record)
      return record
    })
    announce({ kind: 'fetched', id: collectorId, saved })
    return saved.last_fetch_lost_sensors
  }

  async function recordFetchFailure(collectorId: string, error: unknown) {
    const saved: FetchRecord = {
      last_fetch_time: now(),
      last_fetch_successful: 0,
      last_fetch_error_message: messageOf(error),
      last_fetch_new_sensors: 0,
      last_fetch_lost_sensors: 0,
    }
    await repo.updateCollector(db, collectorId, saved)
    announce({ kind: 'fetched', id: collectorId, saved })
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
      removePoller(id)
      await existing.stop()
      await stopHealth(collectorKey(id))
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
    const key = collectorKey(id)
    // A restart after a change (restartCollector) keeps the health it had, so a fixed collector
    // recovers visibly: the failing episode ends with a recovery, not silently.
    const previous = health.get(key)
    if (previous === undefined || previous.state === 'stopped') {
      health.start(key)
    }
    const report = {
      failing: ({ after }: HealthChange) =>
        notifications.raise('collectorFailing', key, { message: `${row.name} is failing: ${after.reason}` }),
      recovered: `${row.name} is healthy again`,
    }
    const poller = loop(
      row.poll_rate_ms,
      async (signal) => {
        let outcome: Outcome
        let readings: Reading[] | undefined
        const started = performance.now()
        try {
          readings = await driver.fetch(signal)
          const lost = await recordFetch(id, readings)
          outcome =
            lost >= healthThresholds.SENSOR_WARNING_LOST_THRESHOLD
              ? { ok: true, degraded: `${lost} sensor${lost === 1 ? '' : 's'} lost` }
              : { ok: true }
        } catch (err) {
          if (signal.aborted && signal.reason?.name !== 'TimeoutError') {
            return
          }
          collectorLog.warn({ err: messageOf(err) }, 'collector fetch failed')
          await recordFetchFailure(id, err).catch(() => {})
          outcome = { ok: false, error: messageOf(err) }
        }
        const sample = { latencyMs: performance.now() - started, readings }
        await recordOutcome(key, outcome, report, sample).catch((err: unknown) =>
          collectorLog.warn({ err: messageOf(err) }, 'collector health not recorded'),
        )
      },
      () => driver.close(),
    )
    addPoller(id, { collectorType: row.collector_type, stop: poller.stop })
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
    const key = streamKey(stream.id)
    if (!sendersPerStream.has(stream.id)) {
      health.start(key)
    }
    const report = {
      failing: ({ before, after }: HealthChange) => {
        if (before.state !== 'failing') {
          streamLog.warn({ err: after.reason }, 'stream send failing')
        }
        return notifications.raise('junctionError', key, {
          message: `${junction.name}: sending to ${stream.name} is failing: ${after.reason}`,
        })
      },
      recovered: `${junction.name}: sending to ${stream.name} works again`,
    }
    const sender = loop(
      sendRateMs,
      async (signal) => {
        let outcome: Outcome
        const started = performance.now()
        try {
          await driver.send(await payloadFor(junction, stream, collectorIds), signal)
          await repo.updateStream(db, stream.id, { last_sent_time: now(), last_error: null })
          outcome = { ok: true }
        } catch (err) {
          if (signal.aborted && signal.reason?.name !== 'TimeoutError') {
            return
          }
          await repo.updateStream(db, stream.id, { last_error: messageOf(err) }).catch(() => {})
          outcome = { ok: false, error: messageOf(err) }
        }
        await recordOutcome(key, outcome, report, { latencyMs: performance.now() - started }).catch((err: unknown) =>
          streamLog.warn({ err: messageOf(err) }, 'stream health not recorded'),
        )
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
    for (const [, { streamId }] of mine) {
      if (!sendersPerStream.has(streamId)) {
        await stopHealth(streamKey(streamId))
      }
    }
  }

  return {
    isPolling: (collectorId: string) => pollers.has(collectorId),
    /**
     * Polling operations running now, and how many of them are failing or degraded; EventEngine left out.
     * From the board's tallies: a collector that does not poll is `stopped`, neither failing nor degraded.
     */
    pollingHealth() {
      const counted = health.tally('collector')
      for (const id of internalPollers) {
        const state = health.get(collectorKey(id))?.state
        if (state === 'failing' || state === 'degraded') {
          counted[state]--
        }
      }
      return { active: pollers.size - internalPollers.size, ...counted }
    },
    /** How many running streams are failing or degraded (a stopped stream is neither). */
    streamHealth: () => health.tally('stream'),
    /** Calls `watcher` with every change the runtime makes to a collector; returns how to stop. */
    watchCollectors(watcher: (event: CollectorEvent) => void): () => void {
      collectorWatchers.add(watcher)
      return () => collectorWatchers.delete(watcher)
    },
    collectorHealth: (id: string) => health.get(collectorKey(id)),
    streamHealthOf: (id: string) => health.get(streamKey(id)),
    healthSettings,
    isStreamRunning: (streamId: string) => sendersPerStream.has(streamId),
    runningStreamIds: () => [...sendersPerStream.keys()],
    isUnlocked,
    syncCollector,

    /** A running poller keeps the settings it started with: replace it after the collector changed. */
    async restartCollector(id: string, readToken: (row: repo.CollectorRow) => string | null): Promise<void> {
      const existing = removePoller(id)
      await existing?.stop()
      await syncCollector(id, readToken)
      if (!pollers.has(id)) {
        await stopHealth(collectorKey(id))
      }
    },

    /** A deleted collector: nothing left to report about it. */
    async forgetHealth(collectorId: string) {
      await stopHealth(collectorKey(collectorId))
      health.forget(collectorKey(collectorId))
    },

    unlock(collectorId: string, token: string) {
      unlockedTokens.set(collectorId, token)
      announce({ kind: 'unlock', id: collectorId })
    },

    forget(collectorId: string) {
      unlockedTokens.delete(collectorId)
      announce({ kind: 'unlock', id: collectorId })
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
        if (!alerts?.silenced(`junction:${junction.id}`)) {
          await notifications.notify('junctionError', {
            message: `${junction.name} could not start: ${messageOf(err)}`,
          })
        }
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
      internalPollers.clear()
      senders.clear()
      sendersPerStream.clear()
      await Promise.all(all.map((item) => item.stop()))
      // Open notifications stay open: a failure still there after the restart updates the same one.
      health.clear()
      healthSettings.forget()
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
