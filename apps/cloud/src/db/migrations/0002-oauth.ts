import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // Every oidc-provider model (sessions, grants, codes, refresh tokens, interactions, clients…) in one table.
  await db.schema
    .createTable('oauth_payloads')
    .addColumn('model', 'varchar(64)', (col) => col.notNull())
    .addColumn('id', 'varchar(255)', (col) => col.notNull())
    .addColumn('payload', 'jsonb', (col) => col.notNull())
    .addColumn('grant_id', 'varchar(255)')
    .addColumn('uid', 'varchar(255)')
    .addColumn('user_code', 'varchar(255)')
    .addColumn('account_id', 'varchar(255)')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('consumed_at', 'timestamptz')
    .addPrimaryKeyConstraint('oauth_payloads_pk', ['model', 'id'])
    .execute()
  await db.schema.createIndex('oauth_payloads_grant').on('oauth_payloads').column('grant_id').execute()
  await db.schema.createIndex('oauth_payloads_uid').on('oauth_payloads').columns(['model', 'uid']).execute()
  await db.schema.createIndex('oauth_payloads_account').on('oauth_payloads').columns(['model', 'account_id']).execute()
  await db.schema.createIndex('oauth_payloads_expiry').on('oauth_payloads').column('expires_at').execute()

  // Token signing keys (private JWKs) and cookie secrets, shared by every instance.
  await db.schema
    .createTable('oauth_keys')
    .addColumn('kid', 'varchar(64)', (col) => col.primaryKey())
    .addColumn('kind', 'varchar(16)', (col) => col.notNull().check(sql`kind in ('signing', 'cookie')`))
    .addColumn('material', 'jsonb', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    // Set when a newer key takes over; the key keeps verifying until `retire_at`, then it is dropped.
    .addColumn('retire_at', 'timestamptz')
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_keys').execute()
  await db.schema.dropTable('oauth_payloads').execute()
}
