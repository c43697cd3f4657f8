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
