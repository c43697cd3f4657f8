import { type Kysely, sql } from 'kysely'

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('local_users')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('username', 'text', (col) => col.notNull().unique().modifyEnd(sql`collate nocase`))
    .addColumn('password_hash', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .execute()

  // Only the SHA-256 of a session token is kept: a copy of the database cannot sign anybody in.
  await db.schema
    .createTable('frontend_sessions')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('user_kind', 'text', (col) => col.notNull().check(sql`user_kind in ('local', 'cloud')`))
    .addColumn('user_id', 'text', (col) => col.notNull())
    .addColumn('user_name', 'text', (col) => col.notNull())
    .addColumn('user_email', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'text', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('frontend_sessions_expires_at').on('frontend_sessions').column('expires_at').execute()

  // The spec's cloud session: the refresh token sealed with AES-256-GCM under keys/secrets.key.
  await db.schema
    .createTable('cloud_sessions')
    .addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
    .addColumn('user_id', 'text', (col) => col.notNull())
    .addColumn('backend_id', 'text', (col) => col.notNull())
    .addColumn('encrypted_refresh_token', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull().defaultTo(now))
    .addColumn('updated_at', 'text', (col) => col.notNull().defaultTo(now))
    .addUniqueConstraint('cloud_sessions_user_backend', ['user_id', 'backend_id'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('cloud_sessions').execute()
  await db.schema.dropTable('frontend_sessions').execute()
  await db.schema.dropTable('local_users').execute()
}
