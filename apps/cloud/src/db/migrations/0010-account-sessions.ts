import type { Kysely } from 'kysely'

/**
 * The account page's browser sessions. The cookie holds a random token; only its SHA-256 is kept,
 * so a copy of the database signs nobody in. Expiry slides with use.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('account_sessions')
    .addColumn('id', 'char(64)', (col) => col.primaryKey())
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('last_seen_at', 'timestamptz', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('account_sessions_user').on('account_sessions').column('user_id').execute()
  await db.schema.createIndex('account_sessions_expiry').on('account_sessions').column('expires_at').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('account_sessions').execute()
}
