import { AppError, MINUTE } from '@relay/contracts'
import Stripe from 'stripe'

/** How far ahead of our clock a signature may be dated: clock skew, as the SDK allows 5 minutes behind. */
const futureTolerance = 5 * MINUTE

/** Checks a webhook's signature over the exact bytes received and reads its event. */
export function verifyEvent(payload: Buffer, signature: string, secret: string, receivedAt: number): Stripe.Event {
  let event: Stripe.Event
  try {
    event = Stripe.webhooks.constructEvent(payload, signature, secret, undefined, undefined, receivedAt)
  } catch (err) {
    // The body is parsed only after its signature matched, so a parse failure is a signed but broken body.
    const message = err instanceof SyntaxError ? 'Malformed JSON in webhook body' : 'Invalid Stripe signature'
    throw new AppError('INVALID_REQUEST', message, { cause: err })
  }
  // The SDK refuses only old signatures: one dated ahead would stay replayable until its date came.
  if (!(signedAt(signature) <= receivedAt + futureTolerance)) {
    throw new AppError('INVALID_REQUEST', 'Invalid Stripe signature')
  }
  if (!isStorable(event?.id, 255) || !isStorable(event.type, 255)) {
    throw new AppError('INVALID_REQUEST', 'Webhook body is not an event')
  }
  return event
}

/** A string the database can keep: bounded, and without NUL, which PostgreSQL text cannot hold. */
function isStorable(value: unknown, maxLength: number): value is string {
  return typeof value === 'string' && value.length <= maxLength && !value.includes('\u0000')
}

/** The `t=` of a Stripe-Signature header in ms, read as the SDK reads it (the last one counts); NaN without one. */
function signedAt(header: string): number {
  let seconds = Number.NaN
  for (const item of header.split(',')) {
    const [name, value = ''] = item.split('=')
    if (name === 't') {
      seconds = Number.parseInt(value, 10)
    }
  }
  return seconds * 1000
}

/** 9999-12-31T23:59:59Z in Unix seconds: no real time is later, and far-off times fail to store. */
const maxTime = 253_402_300_799

/** A Stripe time (Unix seconds) the database can store, else undefined. */
function readTime(value: unknown): Date | undefined {
  return Number.isInteger(value) && (value as number) > 0 && (value as number) <= maxTime
    ? new Date((value as number) * 1000)
    : undefined
}

export type SubscriptionChange = {
  subscriptionId: string
  customerId: string
  status: string
  metadataUserId: string | undefined
  currentPeriodEnd: Date | null
  /** The prices it is for; empty when its items were not sent. */
  priceIds: string[]
  /** When this state was current: the creation time of the event carrying it. */
  stateAt: Date | undefined
}

/** The subscription a `customer.subscription.*` event carries; a 400 when it carries none. */
export function readSubscriptionEvent(event: Stripe.Event): SubscriptionChange {
  const change = readSubscription(event.data?.object, {
    // A deleted subscription has ended whatever status the payload still shows.
    deleted: event.type === 'customer.subscription.deleted',
    stateAt: readTime(event.created),
  })
  if (!change) {
    throw new AppError('INVALID_REQUEST', `Event ${event.id} does not carry a subscription`)
  }
  return change
}

/** A Stripe subscription object (from an event or the API), or undefined when it is not one. */
export function readSubscription(
  object: unknown,
  { deleted = false, stateAt }: { deleted?: boolean; stateAt: Date | undefined },
): SubscriptionChange | undefined {
  const sub = object as Partial<Stripe.Subscription> | null | undefined
  const customerId = idOf(sub?.customer)
  if (!isStorable(sub?.id, 255) || !isStorable(customerId, 255) || !isStorable(sub.status, 32)) {
    return undefined
  }
  // Since API version 2025-03-31 the billing period lives on the subscription's items. A signed body
  // is still only JSON: skip items and times the database cannot store rather than fail on them.
  const items = (Array.isArray(sub.items?.data) ? sub.items.data : []) as (Partial<Stripe.SubscriptionItem> | null)[]
  const periodEnds = items.flatMap((item) => readTime(item?.current_period_end) ?? [])
  const priceIds = items.flatMap((item) => idOf(item?.price) ?? [])
  const userId = sub.metadata?.userId
  return {
    subscriptionId: sub.id,
    customerId,
    status: deleted ? 'canceled' : sub.status,
    metadataUserId: typeof userId === 'string' && userId !== '' ? userId : undefined,
    currentPeriodEnd: periodEnds.length > 0 ? new Date(Math.max(...periodEnds.map(Number))) : null,
    priceIds,
    stateAt,
  }
}

export type CompletedCheckout = {
  sessionId: string
  /** The account that started it (`client_reference_id`, else `metadata.userId`). */
  userId: string | undefined
  customerId: string
  subscriptionId: string
  /** The subscription itself when the event carries it expanded, with its status. */
  subscription: SubscriptionChange | undefined
  /** When the event was created: the subscription read for it is at least this recent. */
  completedAt: Date | undefined
}

/**
 * The subscription Checkout a `checkout.session.completed` event reports; undefined for a Checkout of
 * another mode (not sold here), a 400 when it names no customer or subscription.
 */
export function readCompletedCheckout(event: Stripe.Event): CompletedCheckout | undefined {
  const session = event.data?.object as Partial<Stripe.Checkout.Session> | null | undefined
  if (session?.mode !== 'subscription') {
    return undefined
  }
  const customerId = idOf(session.customer)
  const subscriptionId = idOf(session.subscription)
  if (!isStorable(session.id, 255) || !isStorable(customerId, 255) || !isStorable(subscriptionId, 255)) {
    throw new AppError('INVALID_REQUEST', `Event ${event.id} does not carry a subscription Checkout`)
  }
  const completedAt = readTime(event.created)
  const userId = [session.client_reference_id, session.metadata?.userId].find(
    (id): id is string => typeof id === 'string' && id !== '',
  )
  return {
    sessionId: session.id,
    userId,
    customerId,
    subscriptionId,
    subscription: readSubscription(session.subscription, { stateAt: completedAt }),
    completedAt,
  }
}

/** The id of a reference Stripe sends either as an id or as the expanded object. */
function idOf(ref: unknown): string | undefined {
  if (typeof ref === 'string') {
    return ref
  }
  const id = (ref as { id?: unknown } | null | undefined)?.id
  return typeof id === 'string' ? id : undefined
}
