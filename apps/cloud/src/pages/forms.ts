import type { HttpServer } from '@relay/server-kit'
import { toErrorBody } from '@relay/server-kit'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { messagePage } from './layout.js'

/**
 * Every page answer: never cached, no scripts or framing, no address leaked to other sites. The referrer
 * stays same-origin rather than none: with none, browsers send `Origin: null` on form posts.
 */
export const pageSecurityHeaders = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
}

const formBodyLimit = 4096

/** What a failure says on a page; the error's own message where it is written for people. */
function failureMessage(status: number, message: string): [title: string, message: string] {
  switch (status) {
    case 413:
      return ['The form is too large', 'What you typed is longer than this form accepts. Go back and shorten it.']
    case 415:
      return ['The form was not understood', 'Send the form from its page in your browser.']
    case 429:
    case 503:
      return ['Please try again later', message]
    case 404:
      return ['Page not found', 'There is no page at this address.']
    default:
      return status >= 500
        ? ['Something went wrong', 'Something went wrong on our side. Try again in a moment.']
        : ['The form was not filled in as expected', 'Go back to the form, check what you typed and send it again.']
  }
}

export function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(html)
}

/**
 * Makes a plugin scope serve HTML pages: web forms parsed (small bodies only), the strict page headers
 * on every answer, and failures answered as pages a browser shows rather than JSON.
 */
export function servePages(scope: HttpServer): void {
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: formBodyLimit },
    (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)))
    },
  )
  scope.addHook('onSend', async (_request, reply) => {
    reply.headers(pageSecurityHeaders)
  })
  scope.setErrorHandler((error: FastifyError, request, reply) => {
    const failure = toErrorBody(error)
    if (failure.status >= 500) {
      request.log.error({ err: error }, 'request failed')
    } else {
      request.log.info({ code: failure.body.code, status: failure.status }, failure.body.error)
    }
    const [title, message] = failureMessage(failure.status, failure.body.error)
    return sendPage(reply.headers(failure.headers), failure.status, messagePage(title, message))
  })
}

/** A form field as typed: '' when it is missing or not text (a JSON body can hold anything). */
export function formText(body: unknown, name: string): string {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined
  return typeof value === 'string' ? value : ''
}

/** A query parameter given once as text; undefined otherwise. */
export function queryText(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * Whether a form post came from a page of another site. Browsers send `Origin` with every form post;
 * one that names another origin is refused (SameSite cookies alone let same-site subdomains through).
 * A request without it is not a browser's, so cannot be forged by one.
 */
export function isCrossSite(request: FastifyRequest, publicUrl: string): boolean {
  const origin = request.headers.origin
  return origin !== undefined && origin !== new URL(publicUrl).origin
}
