import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // Which Stripe customer pays for which account: linked when a Checkout completes, read by the
  // Customer Portal and by webhooks whose subscription names no account. A user may have several
  // (two checkouts started side by side); a customer belongs to one user.
  await db.schema
    .createTable('stripe_customers')
    .addColumn('customer_id', 'varchar(255)', (col) => col.primaryKey())
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('linked_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema
    .createIndex('stripe_customers_user')
    .on('stripe_customers')
    .columns(['user_id', 'linked_at'])
    .execute()
  // The customers of subscriptions mirrored before: their owners get the portal too.
  await sql`insert into stripe_customers (customer_id, user_id, linked_at)
    select distinct on (customer_id) customer_id, user_id, created_at from subscriptions
    where provider = 'stripe' and customer_id like 'cus\\_%'
    order by customer_id, updated_at desc`.execute(db)

  // When the provider's state held in a row was current (the creation time of the Stripe event that
  // carried it): a redelivered older event must not overwrite a newer state.
  await db.schema.alterTable('subscriptions').addColumn('provider_state_at', 'timestamptz').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('subscriptions').dropColumn('provider_state_at').execute()
  await db.schema.dropTable('stripe_customers').execute()
}
