import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // A series is an item (`collector:<id>`, `stream:<id>`) or one sensor of a collector: the minute
  // rows name it by a small integer instead of repeating its text, which keeps them a few dozen bytes.
  await db.schema
    .createTable('history_series')
    .addColumn('id', 'integer', (col) => col.primaryKey())
    .addColumn('item', 'text', (col) => col.notNull())
    .addColumn('sensor', 'text', (col) => col.notNull().defaultTo(''))
    .addUniqueConstraint('history_series_item_sensor', ['item', 'sensor'])
    .execute()
  // One row per item and minute (`minute`: whole minutes since 1970), at most 1 440 a day. No index on
  // the minute alone: pruning deletes each series' old rows through the primary key.
  await db.schema
    .createTable('health_minutes')
    .addColumn('series_id', 'integer', (col) => col.notNull())
    .addColumn('minute', 'integer', (col) => col.notNull())
    .addColumn('ok_count', 'integer', (col) => col.notNull())
    .addColumn('fail_count', 'integer', (col) => col.notNull())
    .addColumn('latency_sum_ms', 'integer', (col) => col.notNull())
    .addColumn('latency_max_ms', 'integer', (col) => col.notNull())
    .addColumn('last_error', 'text')
    .addPrimaryKeyConstraint('health_minutes_pk', ['series_id', 'minute'])
    .modifyEnd(sql`without rowid`)
    .execute()
  // One row per sensor and minute, of its numeric values.
  await db.schema
    .createTable('sensor_minutes')
    .addColumn('series_id', 'integer', (col) => col.notNull())
    .addColumn('minute', 'integer', (col) => col.notNull())
    .addColumn('min_value', 'real', (col) => col.notNull())
    .addColumn('max_value', 'real', (col) => col.notNull())
    .addColumn('sum_value', 'real', (col) => col.notNull())
    .addColumn('value_count', 'integer', (col) => col.notNull())
    .addColumn('last_value', 'real', (col) => col.notNull())
    .addPrimaryKeyConstraint('sensor_minutes_pk', ['series_id', 'minute'])
    .modifyEnd(sql`without rowid`)
    .execute()
  await db.schema
    .createTable('health_transitions')
    .addColumn('id', 'integer', (col) => col.primaryKey())
    .addColumn('item', 'text', (col) => col.notNull())
    .addColumn('from_state', 'text', (col) => col.notNull())
    .addColumn('to_state', 'text', (col) => col.notNull())
    .addColumn('at', 'text', (col) => col.notNull())
    .addColumn('reason', 'text')
    .execute()
  await db.schema.createIndex('health_transitions_item').on('health_transitions').columns(['item', 'id']).execute()
  await db.schema.createIndex('health_transitions_at').on('health_transitions').column('at').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['health_transitions', 'sensor_minutes', 'health_minutes', 'history_series']) {
    await db.schema.dropTable(table).execute()
  }
}
