import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // The payment provider's subscriptions, mirrored by webhooks and the admin CLI.
  await db.schema
    .createTable('subscriptions')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'varchar(32)', (col) => col.notNull())
    .addColumn('customer_id', 'varchar(255)', (col) => col.notNull())
    .addColumn('subscription_id', 'varchar(255)', (col) => col.notNull())
    .addColumn('status', 'varchar(32)', (col) => col.notNull())
    .addColumn('current_period_end', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('subscriptions_provider_subscription', ['provider', 'subscription_id'])
    .execute()
  await db.schema.createIndex('subscriptions_user').on('subscriptions').column('user_id').execute()
  await db.schema
    .createIndex('subscriptions_customer')
    .on('subscriptions')
    .columns(['provider', 'customer_id'])
    .execute()

  // Webhook events already applied: a redelivered event id changes nothing.
  await db.schema
    .createTable('payment_events')
    .addColumn('provider', 'varchar(32)', (col) => col.notNull())
    .addColumn('event_id', 'varchar(255)', (col) => col.notNull())
    .addColumn('type', 'varchar(128)', (col) => col.notNull())
    .addColumn('received_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('payment_events_pk', ['provider', 'event_id'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('payment_events').execute()
  await db.schema.dropTable('subscriptions').execute()
}
