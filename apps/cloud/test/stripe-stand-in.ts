import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Stripe from 'stripe'

/** One API call as the stand-in received it. */
export type StandInRequest = {
  method: string
  /** Without the query string, e.g. `/v1/checkout/sessions`. */
  path: string
  /** The form-encoded body (or the query of a GET), keys as sent: `line_items[0][price]`. */
  params: Record<string, string>
  authorization: string | undefined
  contentType: string | undefined
  idempotencyKey: string | undefined
}

export type StandInSubscription = {
  id: string
  object: 'subscription'
  customer: string
  status: string
  metadata: Record<string, string>
  items: {
    object: 'list'
    data: {
      id: string
      object: 'subscription_item'
      price: { id: string; object: 'price' }
      current_period_end: number
    }[]
  }
}

type Customer = { id: string; object: 'customer'; email: string | null; deleted: boolean }

export type CheckoutSession = {
  id: string
  object: 'checkout.session'
  mode: string
  status: 'open' | 'complete'
  payment_status: 'unpaid' | 'paid'
  url: string
  client_reference_id: string | null
  customer: string | null
  customer_email: string | null
  metadata: Record<string, string>
  subscription: string | null
  success_url: string
  cancel_url: string
}

export type StripeStandIn = {
  /** Its origin, for STRIPE_API_URL. */
  url: string
  requests: StandInRequest[]
  customers: Map<string, Customer>
  subscriptions: Map<string, StandInSubscription>
  sessions: Map<string, CheckoutSession>
  /** While set, every call is answered 500 as during an incident at Stripe (and not to be retried). */
  failing: boolean
  /** The customer pays: makes the customer (unless the session named one) and the subscription. */
  complete(sessionId: string, options?: { status?: string; periodEnd?: number }): CheckoutSession
  /** A customer made elsewhere (the Dashboard, another product). */
  addCustomer(email: string): string
  close(): Promise<void>
}

class StripeApiError extends Error {
  readonly status: number
  readonly body: { type: string; message: string; code?: string; param?: string }

  constructor(status: number, body: StripeApiError['body']) {
    super(body.message)
    this.status = status
    this.body = body
  }
}

const invalid = (message: string, param?: string, code = 'parameter_invalid_empty') =>
  new StripeApiError(400, { type: 'invalid_request_error', code, message, ...(param ? { param } : {}) })
const missing = (kind: string, id: string, param: string, status = 404) =>
  new StripeApiError(status, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such ${kind}: '${id}'`,
    param,
  })

/** Parameters each endpoint accepts, as form keys; anything else is refused as Stripe refuses it. */
const checkoutParams = [
  /^mode$/,
  /^line_items\[0\]\[(price|quantity)\]$/,
  /^client_reference_id$/,
  /^metadata\[\w+\]$/,
  /^subscription_data\[metadata\]\[\w+\]$/,
  /^customer$/,
  /^customer_email$/,
  /^success_url$/,
  /^cancel_url$/,
]
const portalParams = [/^customer$/, /^return_url$/]

/**
 * A local HTTP stand-in for the parts of the Stripe API the cloud calls (Checkout Sessions, Billing
 * Portal Sessions, Subscriptions, Customers): it checks the bearer key and the form-encoded
 * parameters, answers Stripe-shaped JSON and errors, and records every request.
 */
export async function startStripeStandIn(options: { secretKey: string; priceId: string }): Promise<StripeStandIn> {
  const requests: StandInRequest[] = []
  const customers = new Map<string, Customer>()
  const subscriptions = new Map<string, StandInSubscription>()
  const sessions = new Map<string, CheckoutSession>()
  /** Each session's parameters, kept to make its subscription when it completes. */
  const sessionParams = new Map<string, Record<string, string>>()
  const newId = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`

  function addCustomer(email: string | null): string {
    const id = newId('cus')
    customers.set(id, { id, object: 'customer', email, deleted: false })
    return id
  }

  function liveCustomer(id: string, param: string): Customer {
    const customer = customers.get(id)
    if (!customer || customer.deleted) {
      throw missing('customer', id, param, param === 'id' ? 404 : 400)
    }
    return customer
  }

  function createCheckoutSession(params: Record<string, string>): CheckoutSession {
    for (const key of ['mode', 'success_url', 'cancel_url', 'line_items[0][price]', 'line_items[0][quantity]']) {
      if (!params[key]) {
        throw invalid(`Missing required param: ${key}.`, key, 'parameter_missing')
      }
    }
    if (!['payment', 'setup', 'subscription'].includes(params.mode ?? '')) {
      throw invalid(`Invalid mode: ${params.mode}`, 'mode', 'parameter_invalid')
    }
    if (params['line_items[0][price]'] !== options.priceId) {
      throw missing('price', params['line_items[0][price]'] ?? '', 'line_items[0][price]', 400)
    }
    if (!/^[1-9]\d*$/.test(params['line_items[0][quantity]'] ?? '')) {
      throw invalid('Invalid integer', 'line_items[0][quantity]', 'parameter_invalid_integer')
    }
    if (params.customer !== undefined && params.customer_email !== undefined) {
      throw invalid('You may only specify one of these parameters: customer, customer_email.', 'customer')
    }
    if (params.customer !== undefined) {
      liveCustomer(params.customer, 'customer')
    }
    const id = newId('cs')
    const session: CheckoutSession = {
      id,
      object: 'checkout.session',
      mode: params.mode ?? '',
      status: 'open',
      payment_status: 'unpaid',
      url: `https://checkout.stripe.test/c/pay/${id}`,
      client_reference_id: params.client_reference_id ?? null,
      customer: params.customer ?? null,
      customer_email: params.customer_email ?? null,
      metadata: nested(params, 'metadata'),
      subscription: null,
      success_url: params.success_url ?? '',
      cancel_url: params.cancel_url ?? '',
    }
    sessions.set(id, session)
    sessionParams.set(id, params)
    return session
  }

  function createPortalSession(params: Record<string, string>) {
    for (const key of ['customer', 'return_url']) {
      if (!params[key]) {
        throw invalid(`Missing required param: ${key}.`, key, 'parameter_missing')
      }
    }
    const customer = liveCustomer(params.customer ?? '', 'customer')
    const id = newId('bps')
    return {
      id,
      object: 'billing_portal.session',
      customer: customer.id,
      return_url: params.return_url,
      url: `https://billing.stripe.test/p/session/${id}`,
    }
  }

  function route(method: string, path: string, params: Record<string, string>): unknown {
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      refuseUnknown(params, checkoutParams)
      return createCheckoutSession(params)
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      refuseUnknown(params, portalParams)
      return createPortalSession(params)
    }
    const subscription = /^\/v1\/subscriptions\/([^/]+)$/.exec(path)
    if (method === 'GET' && subscription) {
      refuseUnknown(params, [])
      const id = decodeURIComponent(subscription[1] ?? '')
      return subscriptions.get(id) ?? fail(missing('subscription', id, 'id'))
    }
    const customer = /^\/v1\/customers\/([^/]+)$/.exec(path)
    if (method === 'DELETE' && customer) {
      refuseUnknown(params, [])
      const found = liveCustomer(decodeURIComponent(customer[1] ?? ''), 'id')
      found.deleted = true
      // Deleting a customer cancels its subscriptions at once.
      for (const sub of subscriptions.values()) {
        if (sub.customer === found.id) {
          sub.status = 'canceled'
        }
      }
      return { id: found.id, object: 'customer', deleted: true }
    }
    throw new StripeApiError(404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${method}: ${path})`,
    })
  }

  const standIn = {
    url: '',
    requests,
    customers,
    subscriptions,
    sessions,
    failing: false,
    complete(sessionId: string, { status = 'active', periodEnd = 1_900_000_000 } = {}) {
      const session = sessions.get(sessionId)
      const params = sessionParams.get(sessionId)
      if (!session || !params || session.status !== 'open') {
        throw new Error(`no open Checkout session ${sessionId}`)
      }
      const customer = session.customer ?? addCustomer(session.customer_email)
      const id = newId('sub')
      subscriptions.set(id, {
        id,
        object: 'subscription',
        customer,
        status,
        metadata: nested(params, 'subscription_data[metadata]'),
        items: {
          object: 'list',
          data: [
            {
              id: newId('si'),
              object: 'subscription_item',
              price: { id: params['line_items[0][price]'] ?? '', object: 'price' },
              current_period_end: periodEnd,
            },
          ],
        },
      })
      Object.assign(session, { status: 'complete', payment_status: 'paid', customer, subscription: id })
      return structuredClone(session)
    },
    addCustomer: (email: string) => addCustomer(email),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', 'http://stand-in')
    const body = await readBody(request)
    const contentType = request.headers['content-type']
    const params = Object.fromEntries(new URLSearchParams(request.method === 'POST' ? body : url.search))
    requests.push({
      method: request.method ?? '',
      path: url.pathname,
      params,
      authorization: request.headers.authorization,
      contentType,
      idempotencyKey: header(request, 'idempotency-key'),
    })
    try {
      if (request.headers.authorization !== `Bearer ${options.secretKey}`) {
        throw new StripeApiError(401, { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_****' })
      }
      if (request.method === 'POST' && contentType !== 'application/x-www-form-urlencoded') {
        throw invalid(`Invalid request: unsupported Content-Type ${contentType}`, undefined, 'parameter_invalid')
      }
      if (standIn.failing) {
        throw new StripeApiError(500, { type: 'api_error', message: 'An unknown error occurred' })
      }
      send(response, 200, route(request.method ?? '', url.pathname, params))
    } catch (err) {
      if (!(err instanceof StripeApiError)) {
        throw err
      }
      send(response, err.status, { error: err.body })
    }
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((err: unknown) => {
      send(response, 500, { error: { type: 'api_error', message: String(err) } })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return standIn
}

function refuseUnknown(params: Record<string, string>, allowed: RegExp[]) {
  for (const key of Object.keys(params)) {
    if (!allowed.some((pattern) => pattern.test(key))) {
      throw invalid(`Received unknown parameter: ${key}`, key, 'parameter_unknown')
    }
  }
}

/** `metadata[userId]=…` → `{ userId: … }` for the keys under `prefix`. */
function nested(params: Record<string, string>, prefix: string): Record<string, string> {
  const result: Record<string, string> = {}
  for (const [key, value] of Object.entries(params)) {
    if (key.startsWith(`${prefix}[`) && key.endsWith(']')) {
      result[key.slice(prefix.length + 1, -1)] = value
    }
  }
  return result
}

function fail(err: StripeApiError): never {
  throw err
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) {
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function send(response: ServerResponse, status: number, body: unknown) {
  // Errors are final: the SDK would otherwise retry a 500 after a pause.
  response.writeHead(status, { 'content-type': 'application/json', 'stripe-should-retry': 'false' })
  response.end(JSON.stringify(body))
}

/**
 * Stripe telling the cloud at `cloudUrl` that a Checkout was paid, as its webhook does: the event,
 * signed with the webhook secret by the SDK's own helper. Answers the cloud's response.
 */
export function deliverCheckoutCompleted(cloudUrl: string, webhookSecret: string, session: CheckoutSession) {
  const payload = JSON.stringify({
    id: `evt_${randomBytes(12).toString('hex')}`,
    object: 'event',
    type: 'checkout.session.completed',
    created: Math.floor(Date.now() / 1000),
    data: { object: session },
  })
  return fetch(`${cloudUrl}/webhooks/stripe`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }),
    },
    body: payload,
  })
}
