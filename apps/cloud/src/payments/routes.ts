import { ErrorBody } from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import { Type } from 'typebox'
import type { PaymentService } from './service.js'

export type PaymentRoutesOptions = { payments: PaymentService }

const WebhookReply = Type.Object({ received: Type.Literal(true), duplicate: Type.Optional(Type.Literal(true)) })

/** The payment provider's webhook. Registered as its own encapsulated plugin: see the body parser. */
export async function paymentRoutes(app: HttpServer, { payments }: PaymentRoutesOptions) {
  // The signature covers the exact bytes sent, so JSON stays a raw Buffer here (and only in this scope).
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body))

  app.route({
    method: 'POST',
    url: '/webhooks/stripe',
    // Stripe holds no access token: the signature over the body is the authentication.
    config: { public: true },
    schema: { response: { 200: WebhookReply, 400: ErrorBody, 503: ErrorBody } },
    handler: async (request) => {
      const signature = request.headers['stripe-signature']
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
      const outcome = await payments.receiveStripeWebhook(body, typeof signature === 'string' ? signature : undefined)
      if (outcome.warning) {
        request.log.warn({ eventId: outcome.eventId, type: outcome.type }, outcome.warning)
      } else {
        request.log.info({ eventId: outcome.eventId, type: outcome.type, result: outcome.result }, 'payment event')
      }
      return outcome.result === 'duplicate'
        ? ({ received: true, duplicate: true } as const)
        : ({ received: true } as const)
    },
  })
}
