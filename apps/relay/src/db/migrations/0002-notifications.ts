import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('notifications')
    // AUTOINCREMENT: a sequence number is never reused, even after the newest row is deleted,
    // so a client's cursor can never skip a notification made later.
    .addColumn('seq', 'integer', (col) => col.primaryKey().autoIncrement())
    .addColumn('id', 'text', (col) => col.notNull().unique())
    .addColumn('type', 'text', (col) => col.notNull().check(sql`type in ('success', 'error', 'warning', 'info')`))
    .addColumn('category', 'text', (col) => col.notNull().check(sql`category in ('api', 'auth', 'cloud', 'system')`))
    .addColumn('title', 'text')
    .addColumn('message', 'text', (col) => col.notNull())
    .addColumn('duration', 'integer')
    .addColumn('persistent', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('is_delivered', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('delivered_at', 'text')
    .addColumn('expires_at', 'text')
    .execute()
  const indexes: [string, string[]][] = [
    ['notifications_pending', ['is_delivered', 'seq']],
    ['notifications_category', ['category', 'seq']],
    ['notifications_chronological', ['created_at']],
    ['notifications_expiry', ['expires_at']],
    ['notifications_pending_expiry', ['is_delivered', 'expires_at']],
  ]
  for (const [name, columns] of indexes) {
    await db.schema.createIndex(name).on('notifications').columns(columns).execute()
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('notifications').execute()
}
