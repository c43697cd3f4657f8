import { AppError } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type Stripe from 'stripe'
import type { CloudDB } from '../db/schema.js'
import type { UserDirectory } from '../directory/service.js'
import type { LicenseChanges, LicenseService } from '../licenses/service.js'
import { type BillingLog, createBilling } from './billing.js'
import type { BillingConfig } from './config.js'
import {
  type CompletedCheckout,
  readCompletedCheckout,
  readSubscription,
  readSubscriptionEvent,
  type SubscriptionChange,
  verifyEvent,
} from './events.js'
import * as repo from './repo.js'
import { createStripeClient, isMissing } from './stripe-client.js'

export type PaymentDeps = {
  db: Kysely<CloudDB>
  licenses: LicenseService
  directory: UserDirectory
  clock: Clock
  /** The webhook endpoint's signing secret (`whsec_…`); webhooks are refused without it. */
  webhookSecret: string | undefined
  /** Checkout and the Customer Portal; off without it. */
  billing: BillingConfig | undefined
  log?: BillingLog
}

export type WebhookOutcome = {
  eventId: string
  type: string
  result: 'applied' | 'duplicate' | 'ignored'
  /** Why an event that should have changed something did not; worth an operator's look. */
  warning?: string
}

/** What an event asks for, worked out before its transaction (reads, Stripe calls). */
type Plan =
  | { kind: 'ignore'; warning?: string }
  | {
      kind: 'apply'
      userId: string
      /** A customer to link to the user (a completed Checkout). */
      link?: string
      change?: SubscriptionChange
      warning?: string
    }

const provider = 'stripe'
const subscriptionEvents = new Set([
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
])

/**
 * A subscription's stage in Stripe's lifecycle, which only moves forward: an incomplete one becomes
 * active or expires, and a canceled or expired one never comes back. A late event must not move it back.
 */
function lifecycleStage(status: string): number {
  if (status === 'incomplete') {
    return 0
  }
  return status === 'canceled' || status === 'incomplete_expired' ? 2 : 1
}

/**
 * Mirrors Stripe subscriptions into the cloud database from its signed webhooks, links the customer
 * of a completed Checkout to its account, and starts Checkout and Customer Portal sessions.
 */
export function createPaymentService({ db, licenses, directory, clock, webhookSecret, billing, log }: PaymentDeps) {
  const stripe = billing ? createStripeClient(billing) : undefined

  async function existingUser(userId: string | undefined): Promise<string | undefined> {
    return userId ? (await directory.find(userId))?.id : undefined
  }

  async function planSubscription(event: Stripe.Event): Promise<Plan> {
    const change = readSubscriptionEvent(event)
    const userId =
      (await existingUser(change.metadataUserId)) ??
      (await repo.findCustomerOwner(db, change.customerId)) ??
      (await licenses.findUserIdByCustomer(provider, change.customerId))
    if (userId) {
      return { kind: 'apply', userId, change }
    }
    // The account it names is gone: sending the event again cannot help.
    if (change.metadataUserId) {
      return { kind: 'ignore', warning: `no user ${change.metadataUserId} for customer ${change.customerId}` }
    }
    // An ended subscription of no known account takes nothing away (an account deleted with its customer,
    // say); a Checkout still to come reads the subscription's state from Stripe itself.
    if (lifecycleStage(change.status) === 2) {
      return { kind: 'ignore' }
    }
    if (billing && change.priceIds.length > 0 && !change.priceIds.includes(billing.priceId)) {
      return { kind: 'ignore', warning: `subscription ${change.subscriptionId} is not for STRIPE_PRICE_ID` }
    }
    // Most likely its Checkout's event is still on the way: Stripe sends this one again later.
    throw new AppError(
      'UNAVAILABLE',
      `No account is linked to Stripe customer ${change.customerId} yet: the event is refused so that Stripe sends it again`,
    )
  }

  async function planCheckout(checkout: CompletedCheckout): Promise<Plan> {
    const userId = await existingUser(checkout.userId)
    if (!userId) {
      return { kind: 'ignore', warning: `no user ${checkout.userId ?? '(none)'} for Checkout ${checkout.sessionId}` }
    }
    const linked = { kind: 'apply', userId, link: checkout.customerId } as const
    if (checkout.subscription) {
      return { ...linked, change: checkout.subscription }
    }
    if (!stripe) {
      const warning = `subscription ${checkout.subscriptionId} not read: STRIPE_SECRET_KEY is not set`
      return { ...linked, warning }
    }
    let object: Stripe.Subscription
    try {
      object = await stripe.subscriptions.retrieve(checkout.subscriptionId)
    } catch (err) {
      if (isMissing(err)) {
        return { ...linked, warning: `subscription ${checkout.subscriptionId} does not exist at Stripe` }
      }
      throw new AppError(
        'UNAVAILABLE',
        `Could not read subscription ${checkout.subscriptionId} from Stripe: the event is refused so that Stripe sends it again`,
        { cause: err },
      )
    }
    // Read after the event was created, so at least as recent as anything an older event carries.
    const change = readSubscription(object, { stateAt: checkout.completedAt })
    if (!change) {
      throw new AppError('UNAVAILABLE', `Stripe answered subscription ${checkout.subscriptionId} with something else`)
    }
    return { ...linked, change }
  }

  function plan(event: Stripe.Event): Promise<Plan> | Plan {
    if (subscriptionEvents.has(event.type)) {
      return planSubscription(event)
    }
    const checkout = event.type === 'checkout.session.completed' ? readCompletedCheckout(event) : undefined
    return checkout ? planCheckout(checkout) : { kind: 'ignore' }
  }

  /** Records a subscription's state unless the one recorded is newer; false when it was older. */
  async function record(changes: LicenseChanges, userId: string, change: SubscriptionChange): Promise<boolean> {
    const previous = await repo.lockSubscriptionState(changes.trx, provider, change.subscriptionId)
    // Stripe does not promise delivery order, and sends a refused event again later: an older
    // state must not replace a newer one.
    if (previous) {
      const earlier = change.stateAt && previous.provider_state_at && change.stateAt < previous.provider_state_at
      if (earlier || lifecycleStage(change.status) < lifecycleStage(previous.status)) {
        return false
      }
    }
    await changes.upsertSubscription({
      userId,
      provider,
      customerId: change.customerId,
      subscriptionId: change.subscriptionId,
      status: change.status,
      currentPeriodEnd: change.currentPeriodEnd,
    })
    if (change.stateAt) {
      await repo.setProviderStateAt(changes.trx, provider, change.subscriptionId, change.stateAt)
    }
    return true
  }

  return {
    billing: createBilling({ db, stripe, priceId: billing?.priceId, log }),

    /**
     * Verifies the signature over the exact bytes received, then applies the event once. An event
     * that cannot be applied yet (its customer is not linked, Stripe is out of reach) is refused
     * with 503 and not recorded, so that Stripe sends it again.
     */
    async receiveStripeWebhook(payload: Buffer, signature: string | undefined): Promise<WebhookOutcome> {
      if (!webhookSecret) {
        throw new AppError('UNAVAILABLE', 'Stripe webhooks are not configured: STRIPE_WEBHOOK_SECRET is not set')
      }
      if (!signature) {
        throw new AppError('INVALID_REQUEST', 'Missing Stripe-Signature header')
      }
      const event = verifyEvent(payload, signature, webhookSecret, clock.now().getTime())
      const outcome = (result: WebhookOutcome['result'], warning?: string): WebhookOutcome => ({
        eventId: event.id,
        type: event.type,
        result,
        ...(warning ? { warning } : {}),
      })
      // A redelivery is answered before any lookup or Stripe call; the insert below still decides.
      if (await repo.hasPaymentEvent(db, provider, event.id)) {
        return outcome('duplicate')
      }
      const planned = await plan(event)

      return licenses.change(async (changes) => {
        // Recorded in the same transaction as the change: a redelivery finds it and changes nothing.
        const receivedAt = clock.now()
        const recordedEvent = { provider, eventId: event.id, type: event.type, receivedAt }
        if (!(await repo.insertPaymentEvent(changes.trx, recordedEvent))) {
          return outcome('duplicate')
        }
        if (planned.kind === 'ignore') {
          return outcome('ignored', planned.warning)
        }
        if (planned.link) {
          await repo.linkCustomer(changes.trx, {
            customerId: planned.link,
            userId: planned.userId,
            linkedAt: receivedAt,
          })
        }
        const recorded = planned.change ? await record(changes, planned.userId, planned.change) : true
        return outcome(recorded ? 'applied' : 'ignored', planned.warning)
      })
    },
  }
}

export type PaymentService = ReturnType<typeof createPaymentService>
