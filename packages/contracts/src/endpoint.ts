import type { Static, TSchema } from 'typebox'

/**
 * Endpoints: where a route lives (method, url) as plain values. A feature's plain module lists them
 * (`sourceUrls`); its schema module pairs each with its TypeBox schemas to make the servers' route
 * descriptors (`routesOf`); `client.ts` types each by the same schemas, imported as types only, for the
 * clients. The browser thus bundles no TypeBox, and every request and reply stays typed by one contract.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** What Fastify validates for a route. */
export type RouteSchema = {
  readonly params?: TSchema
  readonly querystring?: TSchema
  readonly body?: TSchema
  readonly response: { readonly [status: number]: TSchema }
}

declare const schemaType: unique symbol

export type Endpoint<S extends RouteSchema = RouteSchema, D extends number = number> = {
  readonly method: HttpMethod
  /** Fastify's form: `/api/collectors/:id`. */
  readonly url: string
  /** Statuses beyond 2xx whose body is data, not an error (relay health answers 503 with a full report). */
  readonly dataStatuses: readonly D[]
  /** Type only, never set at run time: the route's schemas. */
  readonly [schemaType]?: S
}

/** An endpoint not yet typed by its schemas, as a plain module lists it. */
export type UntypedEndpoint<D extends number = number> = Endpoint<never, D>

export type SchemaOf<E> = E extends Endpoint<infer S> ? S : never

type SuccessStatus = 200 | 201 | 202 | 203 | 204

type Responses<S extends RouteSchema> = S['response']

/** The body type a route answers with at status `K`. */
type BodyAt<S extends RouteSchema, K extends keyof Responses<S>> = Responses<S>[K] extends TSchema
  ? Static<Responses<S>[K]>
  : never

/** Statuses beyond 2xx that a route answers with data: any body but an error body (`success: false`). */
export type DataStatus<S extends RouteSchema> = {
  [K in keyof Responses<S> & number]: K extends SuccessStatus
    ? never
    : BodyAt<S, K> extends { success: false }
      ? never
      : K
}[keyof Responses<S> & number]

type ReplyStatus<S extends RouteSchema> = Extract<keyof Responses<S>, SuccessStatus> | DataStatus<S>

/** What a call resolves to: the body of a 2xx status or of a data status. */
export type Reply<E extends Endpoint> = {
  [K in ReplyStatus<SchemaOf<E>>]: BodyAt<SchemaOf<E>, K>
}[ReplyStatus<SchemaOf<E>>]

type ParamsInput<S extends RouteSchema> = S extends { params: infer P extends TSchema }
  ? { params: Static<P> }
  : unknown
/** Query fields that have a default may be left out, and a schema type does not tell which: all may be. */
type QueryInput<S extends RouteSchema> = S extends { querystring: infer Q extends TSchema }
  ? { query?: Partial<Static<Q>> }
  : unknown
type BodyInput<S extends RouteSchema> = S extends { body: infer B extends TSchema } ? { body: Static<B> } : unknown

/** What a call sends: the url's parameters, the query and the body, each typed by the route's schema. */
export type CallInput<E extends Endpoint> = ParamsInput<SchemaOf<E>> & QueryInput<SchemaOf<E>> & BodyInput<SchemaOf<E>>

/** The query a call may send (see `QueryInput`). */
export type Query<E extends Endpoint> =
  SchemaOf<E> extends { querystring: infer Q extends TSchema } ? Partial<Static<Q>> : never

/** An endpoint as a plain module lists it: untyped until `typedBy` pairs it with its schemas. */
export function endpoint<const D extends number = never>(
  method: HttpMethod,
  url: string,
  options?: { dataStatuses: readonly D[] },
): UntypedEndpoint<D> {
  return { method, url, dataStatuses: options?.dataStatuses ?? [] }
}

/** A server's route descriptor: `app.route({ ...route, handler })`. */
export type Route<S extends RouteSchema> = { readonly method: HttpMethod; readonly url: string; readonly schema: S }

type Schemas = { readonly [name: string]: RouteSchema }

/** Never on an endpoint: where it is required, the type error names the statuses to declare. */
type DataStatusesMustBe<D> = { readonly dataStatusesMustBe: readonly D[] }

/** Endpoints that name exactly the routes of `S`, each declaring exactly its data statuses. */
type PairedWith<S extends Schemas, E> = {
  readonly [K in keyof S]: K extends keyof E
    ? E[K] extends UntypedEndpoint<infer D>
      ? [D] extends [DataStatus<S[K]>]
        ? [DataStatus<S[K]>] extends [D]
          ? E[K]
          : DataStatusesMustBe<DataStatus<S[K]>>
        : DataStatusesMustBe<DataStatus<S[K]>>
      : UntypedEndpoint
    : UntypedEndpoint
} & { readonly [K in Exclude<keyof E, keyof S>]: never }

/**
 * The routes of a feature, each its endpoint plus its schemas. The endpoints and the schemas must name
 * the same routes and each endpoint must declare exactly the data statuses its schemas answer with, so
 * `client.ts`, which types the endpoints by the same schemas, cannot drift from the servers.
 */
export function routesOf<S extends Schemas, E>(
  endpoints: E & PairedWith<S, E>,
  schemas: S,
): { readonly [K in keyof S]: Route<S[K]> } {
  const routes: Record<string, Route<RouteSchema>> = {}
  for (const [name, schema] of Object.entries(schemas)) {
    const { method, url } = (endpoints as Record<string, UntypedEndpoint>)[name] as UntypedEndpoint
    routes[name] = { method, url, schema }
  }
  return routes as { readonly [K in keyof S]: Route<S[K]> }
}

/**
 * A feature's endpoints typed by the schemas `routesOf` pairs them with (same names), for clients:
 * `typedBy<SourceSchemas>()(sourceUrls)`.
 */
export function typedBy<S extends Schemas>() {
  return <E extends { readonly [K in keyof S]: UntypedEndpoint }>(endpoints: E) =>
    endpoints as unknown as { readonly [K in keyof S]: Endpoint<S[K]> }
}
