import type { Kysely, Transaction } from 'kysely'
import type { CloudDB } from '../db/schema.js'

type Db = Kysely<CloudDB> | Transaction<CloudDB>

export type PaymentEvent = { provider: string; eventId: string; type: string; receivedAt: Date }

/** Records an event once; false when its id was already recorded (a redelivery). */
export async function insertPaymentEvent(db: Db, event: PaymentEvent): Promise<boolean> {
  const row = await db
    .insertInto('payment_events')
    .values({ provider: event.provider, event_id: event.eventId, type: event.type, received_at: event.receivedAt })
    .onConflict((oc) => oc.columns(['provider', 'event_id']).doNothing())
    .returning('event_id')
    .executeTakeFirst()
  return row !== undefined
}

export async function hasPaymentEvent(db: Db, provider: string, eventId: string): Promise<boolean> {
  const row = await db
    .selectFrom('payment_events')
    .select('event_id')
    .where('provider', '=', provider)
    .where('event_id', '=', eventId)
    .executeTakeFirst()
  return row !== undefined
}

/** Links a customer to a user; a customer already linked keeps its user. */
export async function linkCustomer(db: Db, link: { customerId: string; userId: string; linkedAt: Date }) {
  await db
    .insertInto('stripe_customers')
    .values({ customer_id: link.customerId, user_id: link.userId, linked_at: link.linkedAt })
    .onConflict((oc) => oc.column('customer_id').doNothing())
    .execute()
}

export async function findCustomerOwner(db: Db, customerId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('stripe_customers')
    .select('user_id')
    .where('customer_id', '=', customerId)
    .executeTakeFirst()
  return row?.user_id
}

/** The user's customers, the last linked first. */
export async function listCustomers(db: Db, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('stripe_customers')
    .select('customer_id')
    .where('user_id', '=', userId)
    .orderBy('linked_at', 'desc')
    .orderBy('customer_id')
    .execute()
  return rows.map((row) => row.customer_id)
}

export async function deleteCustomer(db: Db, customerId: string) {
  await db.deleteFrom('stripe_customers').where('customer_id', '=', customerId).execute()
}

/** Statuses of a subscription that still runs (or can recover); a user who has one must not buy another. */
const liveStatuses = ['active', 'trialing', 'past_due', 'unpaid', 'paused']

export async function hasLiveSubscription(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('subscriptions')
    .select('id')
    .where('user_id', '=', userId)
    .where('status', 'in', liveStatuses)
    .executeTakeFirst()
  return row !== undefined
}

/** A subscription's recorded state, locked until the transaction ends so that two events apply in turn. */
export function lockSubscriptionState(trx: Transaction<CloudDB>, provider: string, subscriptionId: string) {
  return trx
    .selectFrom('subscriptions')
    .select(['status', 'provider_state_at'])
    .where('provider', '=', provider)
    .where('subscription_id', '=', subscriptionId)
    .forUpdate()
    .executeTakeFirst()
}

export async function setProviderStateAt(db: Db, provider: string, subscriptionId: string, at: Date) {
  await db
    .updateTable('subscriptions')
    .set({ provider_state_at: at })
    .where('provider', '=', provider)
    .where('subscription_id', '=', subscriptionId)
    .execute()
}
