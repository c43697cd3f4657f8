import { AppError } from '@relay/contracts'
import Stripe from 'stripe'
import type { BillingConfig } from './config.js'

/** The official SDK, sent to STRIPE_API_URL when it is set. */
export function createStripeClient({ secretKey, apiUrl }: BillingConfig): Stripe {
  return new Stripe(secretKey, {
    ...apiAddress(apiUrl),
    // A webhook or a page waits on these calls: better a clear failure than the SDK's 80 s.
    timeout: 20_000,
    maxNetworkRetries: 2,
    telemetry: false,
    appInfo: { name: 'relay-cloud' },
  })
}

function apiAddress(apiUrl: string | undefined) {
  if (apiUrl === undefined) {
    return {}
  }
  const url = new URL(apiUrl)
  const protocol = url.protocol === 'http:' ? ('http' as const) : ('https' as const)
  return {
    protocol,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (protocol === 'http' ? 80 : 443) : Number(url.port),
  }
}

/** Whether Stripe answered that an object does not exist (deleted in the Dashboard, or never made). */
export function isMissing(err: unknown): boolean {
  return err instanceof Stripe.errors.StripeError && err.code === 'resource_missing'
}

/** What a caller sees when a Stripe call failed; the cause (Stripe's own message) goes to the log. */
export function stripeFailed(err: unknown, doing: string): AppError {
  return new AppError('UNAVAILABLE', `Stripe could not ${doing} just now: try again in a minute`, { cause: err })
}
