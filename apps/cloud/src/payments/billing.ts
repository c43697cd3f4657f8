import { AppError } from '@relay/contracts'
import type { Kysely } from 'kysely'
import type Stripe from 'stripe'
import type { CloudDB } from '../db/schema.js'
import * as repo from './repo.js'
import { isMissing, stripeFailed } from './stripe-client.js'

export type BillingLog = { warn(details: object, message: string): void }

export type BillingDeps = {
  db: Kysely<CloudDB>
  /** Undefined when billing is not configured. */
  stripe: Stripe | undefined
  priceId: string | undefined
  log?: BillingLog
}

export type CheckoutUrls = { success: string; cancel: string }

export type Billing = {
  /** False without STRIPE_SECRET_KEY: operators grant licenses with the admin CLI then. */
  configured: boolean
  /** Starts a Stripe Checkout for a Pro subscription; the URL to send the user to. */
  checkout(user: { id: string; email: string }, urls: CheckoutUrls): Promise<string>
  /** A Customer Portal session for the user's Stripe customer; undefined when the user has none. */
  portal(userId: string, returnUrl: string): Promise<string | undefined>
  /**
   * For account deletion: deletes the user's Stripe customers, which cancels their subscriptions at
   * once (no refund), then the links. A Stripe failure leaves the links, so that deleting can be tried again.
   */
  unlinkCustomer(userId: string): Promise<void>
}

const notConfigured = () =>
  new AppError(
    'UNAVAILABLE',
    'Billing is not configured on this cloud: an operator grants licenses with `npm run cloud -- users gift`',
  )

/** Stripe Checkout and Customer Portal sessions for the cloud's accounts. */
export function createBilling({ db, stripe, priceId, log }: BillingDeps): Billing {
  function configured() {
    if (!stripe || !priceId) {
      throw notConfigured()
    }
    return { stripe, priceId }
  }

  return {
    configured: stripe !== undefined && priceId !== undefined,

    async checkout(user, urls) {
      const { stripe, priceId } = configured()
      if (await repo.hasLiveSubscription(db, user.id)) {
        throw new AppError('CONFLICT', 'You already have a Pro subscription: manage it from the customer portal')
      }
      const [customer] = await repo.listCustomers(db, user.id)
      const create = (payer: { customer: string } | { customer_email: string }) =>
        stripe.checkout.sessions.create({
          mode: 'subscription',
          line_items: [{ price: priceId, quantity: 1 }],
          client_reference_id: user.id,
          metadata: { userId: user.id },
          // Every event of the subscription names its account, even one that comes before the Checkout's.
          subscription_data: { metadata: { userId: user.id } },
          ...payer,
          success_url: urls.success,
          cancel_url: urls.cancel,
        })
      let session: Stripe.Checkout.Session
      try {
        // A returning customer keeps their payment methods and invoices.
        session = await create(customer ? { customer } : { customer_email: user.email })
      } catch (err) {
        if (!(customer && isMissing(err))) {
          throw stripeFailed(err, 'start a checkout')
        }
        // Deleted in the Stripe Dashboard: start over as a new customer.
        await repo.deleteCustomer(db, customer)
        session = await create({ customer_email: user.email }).catch((retryErr: unknown) => {
          throw stripeFailed(retryErr, 'start a checkout')
        })
      }
      if (!session.url) {
        throw new AppError('UNAVAILABLE', 'Stripe started a checkout without a page to pay on: try again in a minute')
      }
      return session.url
    },

    async portal(userId, returnUrl) {
      const { stripe } = configured()
      const [customer] = await repo.listCustomers(db, userId)
      if (!customer) {
        return undefined
      }
      try {
        const session = await stripe.billingPortal.sessions.create({ customer, return_url: returnUrl })
        return session.url
      } catch (err) {
        if (isMissing(err)) {
          await repo.deleteCustomer(db, customer)
          return undefined
        }
        throw stripeFailed(err, 'open the customer portal')
      }
    },

    async unlinkCustomer(userId) {
      for (const customer of await repo.listCustomers(db, userId)) {
        if (stripe) {
          await stripe.customers.del(customer).catch((err: unknown) => {
            if (!isMissing(err)) {
              throw stripeFailed(err, 'cancel the subscription')
            }
          })
        } else {
          log?.warn({ customerId: customer }, 'billing is not configured: cancel this customer in the Stripe Dashboard')
        }
        await repo.deleteCustomer(db, customer)
      }
    },
  }
}
