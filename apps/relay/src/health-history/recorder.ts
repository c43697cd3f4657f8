import { type HealthState, healthHistoryLimits } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import { type Kysely, sql, type Transaction } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import type { HealthSnapshot, Outcome } from '../health-states/machine.js'
import type { Reading } from '../sources/drivers/types.js'
import {
  addOutcome,
  addValue,
  minuteOf,
  numericValue,
  type OutcomeMinute,
  sensorSlotOf,
  shortened,
  type ValueMinute,
} from './minutes.js'
import { pruneHistory } from './prune.js'

/** What one poll or send took, and what a poll read. */
export type OutcomeSample = { latencyMs: number; readings?: readonly Reading[] }

/** What the sources runtime tells the history: each outcome, and each change of an item's state. */
export type HealthObserver = {
  outcome(item: string, outcome: Outcome, sample: OutcomeSample): void
  changed(item: string, before: HealthSnapshot | undefined, after: HealthSnapshot | undefined): void
}

type Transition = { item: string; from: HealthState; to: HealthState; at: string; reason: string | null }

/** Rows per multi-row insert: well under SQLite's limit of bound values. */
const rowsPerInsert = 500

/** A minute flushed again adds to the row the earlier flush wrote. */
const mergedOutcomes = {
  ok_count: sql<number>`ok_count + excluded.ok_count`,
  fail_count: sql<number>`fail_count + excluded.fail_count`,
  latency_sum_ms: sql<number>`latency_sum_ms + excluded.latency_sum_ms`,
  latency_max_ms: sql<number>`max(latency_max_ms, excluded.latency_max_ms)`,
  last_error: sql<string | null>`coalesce(excluded.last_error, last_error)`,
}

const mergedValues = {
  min_value: sql<number>`min(min_value, excluded.min_value)`,
  max_value: sql<number>`max(max_value, excluded.max_value)`,
  sum_value: sql<number>`sum_value + excluded.sum_value`,
  value_count: sql<number>`value_count + excluded.value_count`,
  last_value: sql<number>`excluded.last_value`,
}

async function inChunks<R>(rows: R[], write: (chunk: R[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += rowsPerInsert) {
    await write(rows.slice(i, i + rowsPerInsert))
  }
}

/** Series are keyed `<item>\n<sensor>`; an item's own series has no sensor. */
const seriesKey = (item: string, sensor = '') => `${item}\n${sensor}`

/**
 * The health history of collectors and streams. Outcomes are summed in memory per series and minute,
 * and `flush` writes what was summed in one transaction, merging into rows an earlier flush began:
 * a poll costs a few map updates, the database one transaction a minute. Call `flush` on a timer and
 * at shutdown, after the pollers stopped, so nothing recorded is lost.
 */
export function createHealthHistory({
  db,
  clock,
  log,
  retentionDays,
}: {
  db: Kysely<RelayDB>
  clock: Clock
  log: FastifyBaseLogger
  retentionDays: () => Promise<number>
}) {
  let outcomes = new Map<string, Map<number, OutcomeMinute>>()
  let values = new Map<string, Map<number, ValueMinute>>()
  let transitions: Transition[] = []
  /** The sensors of each collector whose values are kept: the first ones seen, up to the limit. */
  const keptSensors = new Map<string, Set<string>>()
  /** Ids of the series already in the database. */
  const seriesIds = new Map<string, number>()
  let writing: Promise<void> = Promise.resolve()

  function add<T>(pending: Map<string, Map<number, T>>, key: string, minute: number, update: (into?: T) => T) {
    let minutes = pending.get(key)
    if (minutes === undefined) {
      minutes = new Map()
      pending.set(key, minutes)
    }
    minutes.set(minute, update(minutes.get(minute)))
  }

  function recordReadings(item: string, slot: number, readings: readonly Reading[]) {
    let kept = keptSensors.get(item)
    if (kept === undefined) {
      kept = new Set()
      keptSensors.set(item, kept)
    }
    for (const reading of readings) {
      const value = numericValue(reading.value)
      if (value === undefined) {
        continue
      }
      if (!kept.has(reading.externalId)) {
        if (kept.size >= healthHistoryLimits.sensorsPerCollector) {
          continue
        }
        kept.add(reading.externalId)
      }
      add(values, seriesKey(item, reading.externalId), slot, (into) => addValue(into, value))
    }
  }

  /** The ids of the given series, adding those the database does not have yet. */
  async function resolveSeries(trx: Transaction<RelayDB>, keys: Iterable<string>): Promise<void> {
    const missing = [...keys].filter((key) => !seriesIds.has(key))
    for (const key of missing) {
      const [item = '', sensor = ''] = key.split('\n')
      await trx
        .insertInto('history_series')
        .values({ item, sensor })
        .onConflict((oc) => oc.doNothing())
        .execute()
      const row = await trx
        .selectFrom('history_series')
        .select('id')
        .where('item', '=', item)
        .where('sensor', '=', sensor)
        .executeTakeFirstOrThrow()
      seriesIds.set(key, row.id)
    }
  }

  function rowsOf<T, R>(pending: Map<string, Map<number, T>>, row: (seriesId: number, minute: number, sums: T) => R) {
    const rows: R[] = []
    for (const [key, minutes] of pending) {
      const seriesId = seriesIds.get(key) as number
      for (const [minute, sums] of minutes) {
        rows.push(row(seriesId, minute, sums))
      }
    }
    return rows
  }

  async function write(): Promise<void> {
    const batch = { outcomes, values, transitions }
    if (outcomes.size === 0 && values.size === 0 && transitions.length === 0) {
      return
    }
    outcomes = new Map()
    values = new Map()
    transitions = []
    await db.transaction().execute(async (trx) => {
      await resolveSeries(trx, [...batch.outcomes.keys(), ...batch.values.keys()])
      const outcomeRows = rowsOf(batch.outcomes, (series_id, minute, sums) => ({
        series_id,
        minute,
        ok_count: sums.ok,
        fail_count: sums.failed,
        latency_sum_ms: sums.latencySumMs,
        latency_max_ms: sums.latencyMaxMs,
        last_error: sums.lastError,
      }))
      await inChunks(outcomeRows, (chunk) =>
        trx
          .insertInto('health_minutes')
          .values(chunk)
          .onConflict((oc) => oc.columns(['series_id', 'minute']).doUpdateSet(mergedOutcomes))
          .execute(),
      )
      const valueRows = rowsOf(batch.values, (series_id, minute, sums) => ({
        series_id,
        minute,
        min_value: sums.min,
        max_value: sums.max,
        sum_value: sums.sum,
        value_count: sums.count,
        last_value: sums.last,
      }))
      await inChunks(valueRows, (chunk) =>
        trx
          .insertInto('sensor_minutes')
          .values(chunk)
          .onConflict((oc) => oc.columns(['series_id', 'minute']).doUpdateSet(mergedValues))
          .execute(),
      )
      const transitionRows = batch.transitions.map(({ item, from, to, at, reason }) => ({
        item,
        from_state: from,
        to_state: to,
        at,
        reason,
      }))
      await inChunks(transitionRows, (chunk) => trx.insertInto('health_transitions').values(chunk).execute())
    })
  }

  /**
   * Flushes and prunes run one at a time: two flushes never merge the same minute twice, and none
   * uses the id of a series a prune is removing.
   */
  function serially<T>(task: () => Promise<T>): Promise<T> {
    const run = writing.then(task)
    writing = run.then(
      () => {},
      () => {},
    )
    return run
  }

  function flush(): Promise<void> {
    return serially(write).catch((err: unknown) => {
      // The batch is dropped rather than kept growing while the database refuses it.
      seriesIds.clear()
      log.warn({ err }, 'health history not saved')
    })
  }

  const observer: HealthObserver = {
    outcome(item, outcome, { latencyMs, readings }) {
      const minute = minuteOf(clock.now())
      const error = outcome.ok ? null : shortened(outcome.error)
      add(outcomes, seriesKey(item), minute, (into) => addOutcome(into, outcome.ok, latencyMs, error))
      if (readings !== undefined) {
        recordReadings(item, sensorSlotOf(minute), readings)
      }
    },

    changed(item, before, after) {
      const from = before?.state ?? 'stopped'
      if (after === undefined || from === after.state) {
        return
      }
      transitions.push({ item, from, to: after.state, at: after.since, reason: shortened(after.reason) })
    },
  }

  return {
    ...observer,
    flush,

    /** Removes what is older than the retention, and the history of deleted collectors and streams. */
    async prune() {
      const days = await retentionDays()
      return serially(async () => {
        const pruned = await pruneHistory(db, minuteOf(clock.now()) - days * 24 * 60)
        if (pruned.series > 0) {
          seriesIds.clear()
        }
        return pruned
      })
    },

    /** The database was replaced: ids it held no longer apply. */
    forget() {
      seriesIds.clear()
      keptSensors.clear()
    },
  }
}

export type HealthHistory = ReturnType<typeof createHealthHistory>
