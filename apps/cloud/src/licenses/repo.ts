import { type Kysely, type Selectable, sql, type Transaction } from 'kysely'
import type { CloudDB, SubscriptionsTable } from '../db/schema.js'

type Db = Kysely<CloudDB> | Transaction<CloudDB>
export type SubscriptionRow = Selectable<SubscriptionsTable>

/** What a license is decided from, or undefined for an unknown user. */
export function findLicenseFacts(db: Db, userId: string) {
  return db
    .selectFrom('users')
    .select((eb) => [
      // Only the JSON boolean true counts: "true" as a string or 1 is not a gift.
      sql<boolean>`coalesce(users.metadata -> 'giftedLicense' = 'true'::jsonb, false)`.as('gifted'),
      eb
        .exists(
          eb
            .selectFrom('subscriptions')
            .select(sql`1`.as('one'))
            .whereRef('subscriptions.user_id', '=', 'users.id')
            .where('subscriptions.status', '=', 'active'),
        )
        .as('subscribed'),
    ])
    .where('users.id', '=', userId)
    .executeTakeFirst()
}

export function findSubscription(db: Db, provider: string, subscriptionId: string) {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('provider', '=', provider)
    .where('subscription_id', '=', subscriptionId)
    .executeTakeFirst()
}

export async function findUserIdByCustomer(db: Db, provider: string, customerId: string) {
  const row = await db
    .selectFrom('subscriptions')
    .select('user_id')
    .where('provider', '=', provider)
    .where('customer_id', '=', customerId)
    .orderBy('updated_at', 'desc')
    .executeTakeFirst()
  return row?.user_id
}

export type SubscriptionValues = {
  userId: string
  provider: string
  customerId: string
  subscriptionId: string
  status: string
  currentPeriodEnd: Date | null
}

export function upsertSubscription(db: Db, sub: SubscriptionValues, now: Date) {
  const values = {
    user_id: sub.userId,
    customer_id: sub.customerId,
    status: sub.status,
    current_period_end: sub.currentPeriodEnd,
    updated_at: now,
  }
  return db
    .insertInto('subscriptions')
    .values({ ...values, provider: sub.provider, subscription_id: sub.subscriptionId, created_at: now })
    .onConflict((oc) => oc.columns(['provider', 'subscription_id']).doUpdateSet(values))
    .execute()
}

/** Delivered to every listener when the surrounding transaction commits, and never if it rolls back. */
export async function notifyChannel(db: Db, channel: string, payload: string) {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db)
}
