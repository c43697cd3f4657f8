import { ConfigError } from '@relay/server-kit'

/** Stripe Checkout and the Customer Portal, turned on by STRIPE_SECRET_KEY with STRIPE_PRICE_ID. */
export type BillingConfig = Readonly<{
  secretKey: string
  /** The recurring price every Checkout sells. */
  priceId: string
  /** Where the SDK sends its requests; Stripe's own API when undefined. */
  apiUrl: string | undefined
}>

type StripeSettings = {
  secretKey: string | undefined
  priceId: string | undefined
  apiUrl: string | undefined
  webhookSecret: string | undefined
}

/** Billing's settings, undefined when it is off; throws a ConfigError for a half-made configuration. */
export function billingConfig({
  secretKey,
  priceId,
  apiUrl,
  webhookSecret,
}: StripeSettings): BillingConfig | undefined {
  if (secretKey === undefined && priceId === undefined) {
    return undefined
  }
  const problems: string[] = []
  if (secretKey === undefined) {
    problems.push('STRIPE_SECRET_KEY: required when STRIPE_PRICE_ID is set')
  } else if (!/^(sk|rk)_\w+$/.test(secretKey)) {
    // Never echoed: a key pasted into the wrong variable is still a secret.
    problems.push('STRIPE_SECRET_KEY: must be a secret key (sk_…) or a restricted key (rk_…)')
  }
  if (priceId === undefined) {
    problems.push('STRIPE_PRICE_ID: required when STRIPE_SECRET_KEY is set')
  }
  if (webhookSecret === undefined) {
    problems.push(
      'STRIPE_WEBHOOK_SECRET: required when STRIPE_SECRET_KEY is set (without webhooks a paid Checkout grants no license)',
    )
  }
  if (apiUrl !== undefined && !isOrigin(apiUrl)) {
    problems.push(`STRIPE_API_URL: must be an origin such as http://127.0.0.1:12111, without a path (got "${apiUrl}")`)
  }
  if (secretKey === undefined || priceId === undefined || problems.length > 0) {
    throw new ConfigError(problems)
  }
  return Object.freeze({ secretKey, priceId, apiUrl })
}

function isOrigin(value: string): boolean {
  const url = URL.parse(value)
  return url !== null && url.pathname === '/' && url.search === '' && url.hash === '' && url.username === ''
}
