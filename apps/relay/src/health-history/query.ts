import {
  AppError,
  type HealthBucket,
  type HealthEventsQuery,
  type HealthEventsReply,
  type HealthHistoryQuery,
  type HealthHistoryReply,
  healthHistoryLimits,
  MINUTE,
  type SensorPoint,
  type SensorSeries,
} from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import { minuteOf, minuteStart, sensorSlotOf } from './minutes.js'

type Range = { from: Date; to: Date }

function refuse(field: string, message: string): never {
  throw new AppError('INVALID_REQUEST', message, { details: [{ path: `querystring/${field}`, message }] })
}

/** `to` now and `from` a day before unless given; `from` must come first. */
function rangeOf(query: { from?: string; to?: string }, clock: Clock): Range {
  const to = query.to === undefined ? clock.now() : new Date(query.to)
  const from =
    query.from === undefined ? new Date(to.getTime() - healthHistoryLimits.defaultRange) : new Date(query.from)
  if (from.getTime() >= to.getTime()) {
    refuse('from', 'from must be before to')
  }
  return { from, to }
}

/** The collector or stream an item names, or a 404. */
async function requireItem(db: Kysely<RelayDB>, item: string): Promise<{ kind: 'collector' | 'stream'; id: string }> {
  const [kind, id = ''] = item.split(':') as ['collector' | 'stream', string]
  const found =
    kind === 'collector'
      ? await db.selectFrom('collectors').select('id').where('id', '=', id).executeTakeFirst()
      : await db.selectFrom('streams').select('id').where('id', '=', id).executeTakeFirst()
  if (found === undefined) {
    throw new AppError('NOT_FOUND', `${kind === 'collector' ? 'Collector' : 'Stream'} ${id} not found`)
  }
  return { kind, id }
}

/** Re-sums minute rows (in minute order) into buckets of `size` minutes from `first`. */
function bucketed<R extends { minute: number }, B>(
  rows: R[],
  first: number,
  size: number,
  open: (row: R, start: string) => B,
  add: (bucket: B, row: R) => void,
): B[] {
  const buckets: B[] = []
  let slot = -1
  let current: B | undefined
  for (const row of rows) {
    const rowSlot = Math.floor((row.minute - first) / size)
    if (current === undefined || rowSlot !== slot) {
      slot = rowSlot
      current = open(row, minuteStart(first + slot * size))
      buckets.push(current)
    } else {
      add(current, row)
    }
  }
  return buckets
}

export function createHistoryQueries({
  db,
  clock,
  flush,
}: {
  db: Kysely<RelayDB>
  clock: Clock
  flush: () => Promise<void>
}) {
  return {
    /** An item's buckets (and a collector's sensor values) over a range, in buckets of whole minutes. */
    async history(query: HealthHistoryQuery): Promise<HealthHistoryReply> {
      const { kind, id } = await requireItem(db, query.item)
      const { from, to } = rangeOf(query, clock)
      const first = minuteOf(from)
      const end = Math.ceil(to.getTime() / MINUTE)
      const span = end - first
      const size = query.bucket ?? Math.max(1, Math.ceil(span / healthHistoryLimits.maxBuckets))
      if (Math.ceil(span / size) > healthHistoryLimits.maxBuckets) {
        refuse(
          'bucket',
          `${Math.ceil(span / size)} buckets of ${size} minutes: at most ${healthHistoryLimits.maxBuckets} per reply, ` +
            'choose larger buckets or a shorter range',
        )
      }
      // What was recorded since the last flush is part of the answer.
      await flush()
      const outcomeRows = await db
        .selectFrom('health_minutes')
        .innerJoin('history_series', 'history_series.id', 'health_minutes.series_id')
        .selectAll('health_minutes')
        .where('history_series.item', '=', query.item)
        .where('history_series.sensor', '=', '')
        .where('health_minutes.minute', '>=', first)
        .where('health_minutes.minute', '<', end)
        .orderBy('health_minutes.minute')
        .execute()
      const buckets = bucketed(
        outcomeRows,
        first,
        size,
        (row, start): HealthBucket & { latencySumMs: number } => ({
          start,
          ok: row.ok_count,
          failed: row.fail_count,
          latencySumMs: row.latency_sum_ms,
          meanLatencyMs: 0,
          maxLatencyMs: row.latency_max_ms,
          lastError: row.last_error,
        }),
        (bucket, row) => {
          bucket.ok += row.ok_count
          bucket.failed += row.fail_count
          bucket.latencySumMs += row.latency_sum_ms
          bucket.maxLatencyMs = Math.max(bucket.maxLatencyMs, row.latency_max_ms)
          bucket.lastError = row.last_error ?? bucket.lastError
        },
      ).map(({ latencySumMs, ...bucket }) => ({
        ...bucket,
        meanLatencyMs: bucket.ok + bucket.failed === 0 ? 0 : latencySumMs / (bucket.ok + bucket.failed),
      }))
      const sensors = kind === 'collector' ? await sensorSeries(query.item, id, first, end, size) : []
      return { item: query.item, from: from.toISOString(), to: to.toISOString(), bucketMinutes: size, buckets, sensors }
    },

    /** Changes of state, newest first, a page at a time. */
    async events(query: HealthEventsQuery): Promise<HealthEventsReply> {
      if (query.item !== undefined) {
        await requireItem(db, query.item)
      }
      const limit = query.limit ?? healthHistoryLimits.events.defaultLimit
      await flush()
      let select = db
        .selectFrom('health_transitions')
        .selectAll()
        .orderBy('id', 'desc')
        .limit(limit + 1)
      if (query.item !== undefined) {
        select = select.where('item', '=', query.item)
      }
      if (query.from !== undefined || query.to !== undefined) {
        const { from, to } = rangeOf({ from: query.from ?? new Date(0).toISOString(), to: query.to }, clock)
        select = select.where('at', '>=', from.toISOString()).where('at', '<', to.toISOString())
      }
      if (query.before !== undefined) {
        select = select.where('id', '<', query.before)
      }
      const rows = await select.execute()
      const page = rows.slice(0, limit)
      return {
        events: page.map((row) => ({
          id: row.id,
          item: row.item,
          from: row.from_state,
          to: row.to_state,
          at: row.at,
          reason: row.reason,
        })),
        nextCursor: rows.length > limit ? (page.at(-1)?.id ?? null) : null,
      }
    },
  }

  /** Sensor values are kept per slot (`sensorSlotOf`), so their points span whole slots from the slot of `from`. */
  async function sensorSeries(item: string, collectorId: string, from: number, end: number, bucketMinutes: number) {
    const slot = healthHistoryLimits.sensorSlotMinutes
    const first = sensorSlotOf(from)
    const size = Math.ceil(bucketMinutes / slot) * slot
    const rows = await db
      .selectFrom('sensor_minutes')
      .innerJoin('history_series', 'history_series.id', 'sensor_minutes.series_id')
      .select('history_series.sensor')
      .selectAll('sensor_minutes')
      .where('history_series.item', '=', item)
      .where('sensor_minutes.minute', '>=', first)
      .where('sensor_minutes.minute', '<', end)
      .orderBy('history_series.sensor')
      .orderBy('sensor_minutes.minute')
      .execute()
    const bySensor = new Map<string, typeof rows>()
    for (const row of rows) {
      const sensorRows = bySensor.get(row.sensor)
      if (sensorRows === undefined) {
        bySensor.set(row.sensor, [row])
      } else {
        sensorRows.push(row)
      }
    }
    const known = await db
      .selectFrom('sensors')
      .select(['external_id', 'name', 'unit'])
      .where('collector_id', '=', collectorId)
      .execute()
    const described = new Map(known.map((sensor) => [sensor.external_id, sensor]))
    return [...bySensor].map(
      ([sensor, sensorRows]): SensorSeries => ({
        sensor,
        name: described.get(sensor)?.name ?? null,
        unit: described.get(sensor)?.unit ?? null,
        points: bucketed(
          sensorRows,
          first,
          size,
          (row, start): SensorPoint & { sum: number; count: number } => ({
            start,
            min: row.min_value,
            max: row.max_value,
            avg: 0,
            last: row.last_value,
            sum: row.sum_value,
            count: row.value_count,
          }),
          (point, row) => {
            point.min = Math.min(point.min, row.min_value)
            point.max = Math.max(point.max, row.max_value)
            point.sum += row.sum_value
            point.count += row.value_count
            point.last = row.last_value
          },
        ).map(({ sum, count, ...point }) => ({ ...point, avg: sum / count })),
      }),
    )
  }
}
