import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('collectors')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('collector_type', 'text', (col) =>
      col.notNull().check(sql`collector_type in ('Host', 'GenericAPI', 'MQTT', 'Virtual', 'EventEngine')`),
    )
    .addColumn('poll_rate_ms', 'integer', (col) => col.notNull())
    .addColumn('settings', 'text', (col) => col.notNull().defaultTo('{}'))
    .addColumn('active', 'integer', (col) => col.notNull().defaultTo(0))
    // Sealed with the relay's key, or with a key derived from the user's password (salt beside it).
    .addColumn('access_token', 'text')
    .addColumn('access_token_salt', 'text')
    .addColumn('last_fetch_time', 'text')
    .addColumn('last_fetch_successful', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_fetch_error_message', 'text')
    .addColumn('last_fetch_total_sensors', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_fetch_new_sensors', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_fetch_lost_sensors', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('sensors')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('collector_id', 'text', (col) => col.notNull().references('collectors.id').onDelete('cascade'))
    .addColumn('external_id', 'text', (col) => col.notNull())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('unit', 'text')
    .addColumn('value', 'text')
    .addColumn('last_updated', 'text')
    .addColumn('missing', 'integer', (col) => col.notNull().defaultTo(0))
    .addUniqueConstraint('sensors_collector_external', ['collector_id', 'external_id'])
    .execute()

  await db.schema
    .createTable('streams')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('type', 'text', (col) =>
      col.notNull().check(sql`type in ('HTTP', 'MQTT', 'COM', 'WebSocket', 'Virtual')`),
    )
    .addColumn('settings', 'text', (col) => col.notNull().defaultTo('{}'))
    .addColumn('device_name', 'text')
    .addColumn('screen_id', 'text')
    .addColumn('last_sent_time', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('junctions')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull().defaultTo('Idle').check(sql`status in ('Idle', 'Running')`))
    .addColumn('auto_start', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('junction_collectors')
    .addColumn('junction_id', 'text', (col) => col.notNull().references('junctions.id').onDelete('cascade'))
    .addColumn('collector_id', 'text', (col) => col.notNull().references('collectors.id').onDelete('cascade'))
    .addColumn('position', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('junction_collectors_pk', ['junction_id', 'collector_id'])
    .execute()

  await db.schema
    .createTable('junction_targets')
    .addColumn('junction_id', 'text', (col) => col.notNull().references('junctions.id').onDelete('cascade'))
    .addColumn('stream_id', 'text', (col) => col.notNull().references('streams.id').onDelete('cascade'))
    .addColumn('send_rate_ms', 'integer', (col) => col.notNull())
    .addColumn('position', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('junction_targets_pk', ['junction_id', 'stream_id'])
    .execute()

  await db.schema
    .createIndex('junction_collectors_collector')
    .on('junction_collectors')
    .column('collector_id')
    .execute()
  await db.schema.createIndex('junction_targets_stream').on('junction_targets').column('stream_id').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['junction_targets', 'junction_collectors', 'junctions', 'streams', 'sensors', 'collectors']) {
    await db.schema.dropTable(table).execute()
  }
}
