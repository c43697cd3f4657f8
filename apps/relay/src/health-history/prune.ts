import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import { minuteStart } from './minutes.js'

/** Whether the collector or stream an item names still exists. */
async function existingItems(db: Kysely<RelayDB>): Promise<Set<string>> {
  const collectors = await db.selectFrom('collectors').select('id').execute()
  const streams = await db.selectFrom('streams').select('id').execute()
  return new Set([...collectors.map(({ id }) => `collector:${id}`), ...streams.map(({ id }) => `stream:${id}`)])
}

/**
 * Deletes the minute rows before `cutoffMinute` and the transitions before its start, series by
 * series through the primary key; and all history of items that no longer exist. One transaction.
 */
export async function pruneHistory(db: Kysely<RelayDB>, cutoffMinute: number) {
  return db.transaction().execute(async (trx) => {
    const existing = await existingItems(trx)
    const series = await trx.selectFrom('history_series').select(['id', 'item', 'sensor']).execute()
    let minutes = 0
    const gone = series.filter((one) => !existing.has(one.item))
    for (const one of series) {
      const table = one.sensor === '' ? 'health_minutes' : 'sensor_minutes'
      let removal = trx.deleteFrom(table).where('series_id', '=', one.id)
      if (existing.has(one.item)) {
        removal = removal.where('minute', '<', cutoffMinute)
      }
      minutes += Number((await removal.executeTakeFirst()).numDeletedRows)
    }
    if (gone.length > 0) {
      await trx
        .deleteFrom('history_series')
        .where(
          'id',
          'in',
          gone.map(({ id }) => id),
        )
        .execute()
    }
    const withTransitions = await trx.selectFrom('health_transitions').select('item').distinct().execute()
    const goneItems = withTransitions.map(({ item }) => item).filter((item) => !existing.has(item))
    const transitions = await trx
      .deleteFrom('health_transitions')
      .where((eb) =>
        goneItems.length > 0
          ? eb.or([eb('at', '<', minuteStart(cutoffMinute)), eb('item', 'in', goneItems)])
          : eb('at', '<', minuteStart(cutoffMinute)),
      )
      .executeTakeFirst()
    return { minutes, transitions: Number(transitions.numDeletedRows), series: gone.length }
  })
}
