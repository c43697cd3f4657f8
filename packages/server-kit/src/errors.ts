import { AppError, type ErrorBody, type ErrorCode, errorStatus } from '@relay/contracts'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/** Fastify's own 4xx errors, by code, mapped onto the contract's codes. */
const fastifyErrorCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_REQUEST',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_REQUEST',
  FST_ERR_NOT_FOUND: 'NOT_FOUND',
}

export function errorBody(code: ErrorCode, error: string, details?: ErrorBody['details']): ErrorBody {
  return details ? { success: false, error, code, details } : { success: false, error, code }
}

export function sendError(reply: FastifyReply, code: ErrorCode, message: string, details?: ErrorBody['details']) {
  return sendErrorReply(reply, {
    status: errorStatus[code],
    body: errorBody(code, message, details),
    headers: noHeaders,
  })
}

/** A failure as the client sees it: status, body, and the headers an `AppError` carries (`Retry-After`). */
export type ErrorReply = { status: number; body: ErrorBody; headers: Readonly<Record<string, string>> }

const noHeaders: Readonly<Record<string, string>> = Object.freeze({})

export function toErrorBody(error: FastifyError | AppError | Error): ErrorReply {
  if (error instanceof AppError) {
    return { status: error.status, body: errorBody(error.code, error.message, error.details), headers: error.headers }
  }
  const fastifyError = error as FastifyError
  if (fastifyError.validation) {
    const details = fastifyError.validation.map((issue) => {
      const missing = (issue.params as { missingProperty?: string }).missingProperty
      const field = issue.instancePath || (missing ? `/${missing}` : '')
      return { path: `${fastifyError.validationContext ?? 'request'}${field}`, message: issue.message ?? 'is invalid' }
    })
    return {
      status: 400,
      body: errorBody('INVALID_REQUEST', `Invalid request: ${fastifyError.message}`, details),
      headers: noHeaders,
    }
  }
  const status = fastifyError.statusCode ?? 500
  if (status >= 400 && status < 500) {
    const code = fastifyErrorCodes[fastifyError.code] ?? codeForStatus(status)
    const message =
      fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? 'Malformed JSON in request body' : fastifyError.message
    const mapped = errorStatus[code] === status ? status : errorStatus[code]
    return { status: mapped, body: errorBody(code, message), headers: noHeaders }
  }
  return { status: 500, body: errorBody('INTERNAL', 'Internal server error'), headers: noHeaders }
}

/** Sends a failure in the contract's shape, with the headers it carries. */
export function sendErrorReply(reply: FastifyReply, { status, body, headers }: ErrorReply) {
  return reply.code(status).headers(headers).type('application/json; charset=utf-8').send(body)
}

function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return 'UNAUTHORIZED'
    case 403:
      return 'FORBIDDEN'
    case 404:
      return 'NOT_FOUND'
    case 409:
      return 'CONFLICT'
    case 413:
      return 'PAYLOAD_TOO_LARGE'
    case 415:
      return 'UNSUPPORTED_MEDIA_TYPE'
    case 429:
      return 'RATE_LIMITED'
    default:
      return 'INVALID_REQUEST'
  }
}

export type NotFoundHandler = (request: FastifyRequest, reply: FastifyReply) => unknown

export const routeNotFound: NotFoundHandler = (request, reply) =>
  sendError(reply, 'NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`)

/**
 * One error handler for the whole app: every failure leaves as the contract's `ErrorBody`.
 * 5xx details go to the log, never to the client.
 */
export function registerErrorHandling(app: FastifyInstance, notFound: NotFoundHandler = routeNotFound): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // An unknown route stays a 404 even when its body fails to parse first.
    if (request.is404) {
      return notFound(request, reply)
    }
    const failure = toErrorBody(error)
    if (failure.status >= 500) {
      request.log.error({ err: error }, 'request failed')
    } else {
      request.log.info({ code: failure.body.code, status: failure.status }, failure.body.error)
    }
    return sendErrorReply(reply, failure)
  })
  app.setNotFoundHandler(notFound)
}
