import type { Server } from 'node:http'
import Fastify from 'fastify'

type Listenable = {
  listen(options: { port: number; host: string }): Promise<string>
  server: Server
}

/** Listens on an ephemeral port of 127.0.0.1 and returns the base URL. */
export async function listenLocal(app: Listenable): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') {
    throw new Error('expected a TCP address')
  }
  return `http://127.0.0.1:${address.port}`
}

/**
 * The ceiling: bare Fastify 5 routes with no schema, hooks or logger, doing none of the work ours does.
 * `GET /bare` answers a small JSON object; `POST /bare` parses a JSON body (Fastify's default parser) and
 * answers 201 with a small one.
 */
export function createBareRoutes() {
  const app = Fastify({ logger: false })
  app.get('/bare', async () => ({ status: 'ok' }))
  app.post('/bare', async (_request, reply) => reply.code(201).send({ status: 'created' }))
  return app
}
