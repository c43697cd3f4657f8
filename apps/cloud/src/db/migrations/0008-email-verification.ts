import { type Kysely, sql } from 'kysely'

/**
 * Self-service accounts: whether an address is confirmed, and the single-use links mailed to
 * confirm one, reset a password or change the address. A link's token is kept only as its
 * SHA-256, so a copy of the database holds no usable link.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('email_verified_at', 'timestamptz').execute()
  // Accounts made before sign-up existed were made by an operator, who vouched for the address.
  await sql`UPDATE users SET email_verified_at = created_at`.execute(db)

  await db.schema
    .createTable('email_tokens')
    .addColumn('token_hash', 'char(64)', (col) => col.primaryKey())
    .addColumn('purpose', 'varchar(32)', (col) =>
      col.notNull().check(sql`purpose IN ('verify-email', 'reset-password', 'change-email')`),
    )
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('new_email', 'varchar(255)')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('email_tokens_user').on('email_tokens').columns(['user_id', 'purpose']).execute()
  await db.schema.createIndex('email_tokens_expiry').on('email_tokens').column('expires_at').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('email_tokens').execute()
  await db.schema.alterTable('users').dropColumn('email_verified_at').execute()
}
