import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // A notification about a lasting condition (a failing source) carries a dedupe key: repeats update
  // its one open row (count, last seen) until the condition ends and the row is resolved.
  await db.schema.alterTable('notifications').addColumn('dedupe_key', 'text').execute()
  await db.schema
    .alterTable('notifications')
    .addColumn('occurrences', 'integer', (col) => col.notNull().defaultTo(1))
    .execute()
  await db.schema.alterTable('notifications').addColumn('last_seen_at', 'text').execute()
  await db.schema.alterTable('notifications').addColumn('resolved_at', 'text').execute()
  // At most one open row per key, found by the key.
  await db.schema
    .createIndex('notifications_open_dedupe_key')
    .on('notifications')
    .column('dedupe_key')
    .unique()
    .where(sql.ref('resolved_at'), 'is', null)
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('notifications_open_dedupe_key').execute()
  for (const column of ['resolved_at', 'last_seen_at', 'occurrences', 'dedupe_key']) {
    await db.schema.alterTable('notifications').dropColumn(column).execute()
  }
}
