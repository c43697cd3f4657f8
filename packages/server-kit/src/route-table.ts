import type { FastifyInstance, RouteOptions } from 'fastify'

/** One registered route, as the router matches it. */
export type RouteEntry = {
  method: string
  url: string
  config: Readonly<Record<string, unknown>>
  schema: RouteOptions['schema']
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Who may reach the route without signing in: `true` for everyone, `'cloud-mode'` for
     * everyone while the relay is in cloud mode (how a cloud sign-in starts). Every other
     * route is private: guards deny by default.
     */
    public?: true | 'cloud-mode'
  }
}

const tables = new WeakMap<object, RouteOptions[]>()

/**
 * Records every route registered on `app` and its plugins from now on, so security and fuzz tests
 * can walk the real route table: a route added tomorrow is covered the day it is added.
 */
export function recordRoutes(app: FastifyInstance): void {
  const table: RouteOptions[] = []
  tables.set(app, table)
  // The options object itself: onRoute hooks that run after this one may still change its config.
  app.addHook('onRoute', (route) => {
    table.push(route)
  })
}

/** The routes `recordRoutes` saw on this server, in registration order. */
export function routeTable(app: FastifyInstance): readonly RouteEntry[] {
  const table = tables.get(app)
  if (!table) {
    throw new Error('routeTable needs a server created by createHttpServer')
  }
  return table.flatMap((route) =>
    [route.method]
      .flat()
      .map((method) => ({ method, url: route.url, config: { ...route.config }, schema: route.schema })),
  )
}
