import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // At most one acknowledgement per item (`collector:<id>`, `stream:<id>`): acknowledging again replaces it.
  await db.schema
    .createTable('health_acknowledgements')
    .addColumn('item', 'text', (col) => col.primaryKey())
    .addColumn('note', 'text')
    .addColumn('at', 'text', (col) => col.notNull())
    .execute()
  // A silence names an item or an area, never both; rows past `until` are ended and removed on the next visit.
  await db.schema
    .createTable('health_silences')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('item', 'text')
    .addColumn('area', 'text')
    .addColumn('reason', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('until', 'text', (col) => col.notNull())
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('health_silences').execute()
  await db.schema.dropTable('health_acknowledgements').execute()
}
