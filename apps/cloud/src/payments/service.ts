import { AppError, MINUTE } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import Stripe from 'stripe'
import type { UserDirectory } from '../directory/service.js'
import type { LicenseService } from '../licenses/service.js'
import { insertPaymentEvent } from './repo.js'

export type PaymentDeps = {
  licenses: LicenseService
  directory: UserDirectory
  clock: Clock
  /** The webhook endpoint's signing secret (`whsec_…`); webhooks are refused without it. */
  webhookSecret: string | undefined
}

export type WebhookOutcome = {
  eventId: string
  type: string
  result: 'applied' | 'duplicate' | 'ignored'
  /** Why an event that should have changed something did not; worth an operator's look. */
  warning?: string
}

const provider = 'stripe'
/** How far ahead of our clock a signature may be dated: clock skew, as the SDK allows 5 minutes behind. */
const futureTolerance = 5 * MINUTE
const subscriptionEvents = new Set([
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
])

/** Mirrors the payment provider's subscriptions into the cloud database from its signed webhooks. */
export function createPaymentService({ licenses, directory, clock, webhookSecret }: PaymentDeps) {
  async function findUser(subscription: SubscriptionChange): Promise<string | undefined> {
    const fromMetadata = subscription.metadataUserId && (await directory.find(subscription.metadataUserId))
    return fromMetadata ? fromMetadata.id : licenses.findUserIdByCustomer(provider, subscription.customerId)
  }

  return {
    /** Verifies the signature over the exact bytes received, then applies the event once. */
    async receiveStripeWebhook(payload: Buffer, signature: string | undefined): Promise<WebhookOutcome> {
      if (!webhookSecret) {
        throw new AppError('UNAVAILABLE', 'Stripe webhooks are not configured: STRIPE_WEBHOOK_SECRET is not set')
      }
      if (!signature) {
        throw new AppError('INVALID_REQUEST', 'Missing Stripe-Signature header')
      }
      const event = verify(payload, signature, webhookSecret, clock.now().getTime())
      const outcome = (result: WebhookOutcome['result'], warning?: string): WebhookOutcome => ({
        eventId: event.id,
        type: event.type,
        result,
        ...(warning ? { warning } : {}),
      })
      const change = subscriptionEvents.has(event.type) ? readSubscription(event) : undefined
      const userId = change && (await findUser(change))
      const previous = change && (await licenses.findSubscription(provider, change.subscriptionId))

      return licenses.change(async (changes) => {
        // Recorded in the same transaction as the change: a redelivery finds it and changes nothing.
        const receivedAt = clock.now()
        if (!(await insertPaymentEvent(changes.trx, { provider, eventId: event.id, type: event.type, receivedAt }))) {
          return outcome('duplicate')
        }
        if (!change) {
          return outcome('ignored')
        }
        if (!userId) {
          return outcome('ignored', `no user for customer ${change.customerId}`)
        }
        // Stripe does not promise delivery order, and a canceled subscription never comes back:
        // a late "updated" must not revive it.
        if (previous?.status === 'canceled' && change.status !== 'canceled') {
          return outcome('ignored', `subscription ${change.subscriptionId} is already canceled`)
        }
        await changes.upsertSubscription({
          userId,
          provider,
          customerId: change.customerId,
          subscriptionId: change.subscriptionId,
          status: change.status,
          currentPeriodEnd: change.currentPeriodEnd,
        })
        return outcome('applied')
      })
    },
  }
}

export type PaymentService = ReturnType<typeof createPaymentService>

function verify(payload: Buffer, signature: string, secret: string, receivedAt: number): Stripe.Event {
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

/** 9999-12-31T23:59:59Z in Unix seconds: no real billing period ends later, and far-off times fail to store. */
const maxPeriodEnd = 253_402_300_799

type SubscriptionChange = {
  subscriptionId: string
  customerId: string
  status: string
  metadataUserId: string | undefined
  currentPeriodEnd: Date | null
}

function readSubscription(event: Stripe.Event): SubscriptionChange {
  const sub = event.data?.object as Partial<Stripe.Subscription> | undefined
  const customerId = typeof sub?.customer === 'string' ? sub.customer : sub?.customer?.id
  if (!isStorable(sub?.id, 255) || !isStorable(customerId, 255) || !isStorable(sub.status, 32)) {
    throw new AppError('INVALID_REQUEST', `Event ${event.id} does not carry a subscription`)
  }
  // Since API version 2025-03-31 the billing period lives on the subscription's items. A signed body
  // is still only JSON: skip items and times the database cannot store rather than fail on them.
  const items: unknown[] = Array.isArray(sub.items?.data) ? sub.items.data : []
  const periodEnds = items
    .map((item) => (item as Partial<Stripe.SubscriptionItem> | null)?.current_period_end)
    .filter((end): end is number => Number.isInteger(end) && (end as number) > 0 && (end as number) <= maxPeriodEnd)
  const userId = sub.metadata?.userId
  return {
    subscriptionId: sub.id,
    customerId,
    // A deleted subscription has ended whatever status the payload still shows.
    status: event.type === 'customer.subscription.deleted' ? 'canceled' : sub.status,
    metadataUserId: typeof userId === 'string' && userId !== '' ? userId : undefined,
    currentPeriodEnd: periodEnds.length > 0 ? new Date(Math.max(...periodEnds) * 1000) : null,
  }
}
