import type { Duplex } from 'node:stream'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Ajv, type Options as AjvOptions } from 'ajv'
import addFormats from 'ajv-formats'
import Fastify, { type FastifyReply } from 'fastify'
import { errorBody, type NotFoundHandler, registerErrorHandling, sendErrorReply, toErrorBody } from './errors.js'
import { type LoggerSettings, loggerOptions } from './logger.js'
import { recordRoutes } from './route-table.js'

export type HttpServerOptions = {
  logger: LoggerSettings
  /** Largest accepted request body, bytes. */
  bodyLimit?: number
  /** Answers unknown routes; defaults to a 404 error body. */
  notFound?: NotFoundHandler
}

const ajvBase: AjvOptions = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false }

function createAjv(coerceTypes: AjvOptions['coerceTypes']): Ajv {
  const ajv = new Ajv({ ...ajvBase, coerceTypes })
  addFormats.default(ajv)
  return ajv
}

/**
 * A Fastify instance with the TypeBox type provider and the contract's error handling.
 * Bodies are validated strictly (a string is never coerced into a number); query strings,
 * params and headers arrive as text and are coerced to the schema's types.
 */
export function createHttpServer({ logger, bodyLimit = 1024 * 1024, notFound }: HttpServerOptions) {
  const app = Fastify({
    logger: loggerOptions(logger),
    bodyLimit,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors the router raises before any route runs (a bad URL encoding, an overlong parameter)
    // would otherwise bypass the error handler and answer in Fastify's own shape.
    frameworkErrors: (error, _request, reply: FastifyReply) => sendErrorReply(reply, toErrorBody(error)),
    clientErrorHandler: answerMalformedRequest,
  }).withTypeProvider<TypeBoxTypeProvider>()
  const strict = createAjv(false)
  const coercing = createAjv('array')
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema))
  registerErrorHandling(app, notFound)
  recordRoutes(app)
  return app
}

export type HttpServer = ReturnType<typeof createHttpServer>

/**
 * A request Node's HTTP parser refuses (a backslash or a space in the path, a broken header) never
 * reaches the router: it is answered here, in the contract's error shape, and the connection closed.
 */
function answerMalformedRequest(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) {
    return
  }
  const [status, reason, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'Request headers too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request took too long to arrive']
        : [400, 'Bad Request', 'Malformed HTTP request']
  const body = JSON.stringify(errorBody('INVALID_REQUEST', message))
  if (!socket.writable) {
    socket.destroy()
    return
  }
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}
