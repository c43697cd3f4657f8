import fc from 'fast-check'

/** The parts of JSON Schema (as TypeBox writes it) the fuzzer reads. */
export type JsonSchema = {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean | JsonSchema
  patternProperties?: Record<string, JsonSchema>
  minProperties?: number
  items?: JsonSchema
  minItems?: number
  maxItems?: number
  uniqueItems?: boolean
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  allOf?: JsonSchema[]
  const?: unknown
  enum?: unknown[]
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
}

export type FuzzOptions = {
  /** Values that exist on the server (ids), by property name: valid values draw on them half the time. */
  known?: Readonly<Record<string, readonly unknown[]>>
  /** A stricter schema for a property than its route declares (settings checked later by the service). */
  refine?: Readonly<Record<string, JsonSchema>>
}

/** A route as `routeTable(app)` lists it. */
export type FuzzRoute = { method: string; url: string; schema?: unknown }

export type FuzzedRequest = {
  method: string
  url: string
  headers: Record<string, string>
  payload?: string | Buffer
  /** What kind of input this is, for the failure report. */
  variant: string
}

const protoKeys = ['__proto__', 'constructor', 'prototype'] as const

/** Strings a server must store or refuse, never trip over: controls, bidi, lone surrogates, NUL. */
const nastyStrings = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0001\u001f\u007f',
  '\r\n\r\nX-Injected: 1',
  '\u202eevil',
  '\ufeff',
  '\ud800',
  '\udfff\ud800',
  '💥'.repeat(50),
  'é'.normalize('NFD'),
  '../../etc/passwd',
  '%00',
  '%',
  "'; drop table users; --",
  '<script>alert(1)</script>',
  '{{7*7}}',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e309',
  '0x10',
  'true',
  '[]',
  '{}',
]

const hugeNumbers = [
  -1,
  -0,
  0.5,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER + 2,
  Number.MIN_SAFE_INTEGER - 2,
  2 ** 31,
  2 ** 63,
  5e-324,
]

function schemaTypes(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) {
    return schema.type
  }
  if (schema.type) {
    return [schema.type]
  }
  if (schema.properties || schema.patternProperties) {
    return ['object']
  }
  return []
}

/** Ajv compiles patterns with the `u` flag; fall back for patterns only valid without it. */
function compilePattern(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'u')
  } catch {
    return new RegExp(pattern)
  }
}

const codePoints = (value: string) => [...value].length

/**
 * The pattern without its lookahead and lookbehind groups, which fast-check cannot generate from:
 * the bounded filter in `validString` then applies the real pattern.
 */
function withoutLookarounds(pattern: string): string {
  let out = ''
  let skipDepth = 0
  let depth = 0
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] as string
    let token = char
    if (char === '\\') {
      token = pattern.slice(i, i + 2)
      i++
    } else if (inClass) {
      inClass = char !== ']'
    } else if (char === '[') {
      inClass = true
    } else if (char === '(') {
      depth++
      if (skipDepth === 0 && /^\(\?<?[=!]/.test(pattern.slice(i, i + 4))) {
        skipDepth = depth
      }
    } else if (char === ')') {
      depth--
      if (skipDepth > depth) {
        skipDepth = 0
        continue
      }
    }
    if (skipDepth === 0) {
      out += token
    }
  }
  return out
}

/**
 * The first of a few draws that passes `test`, else the last draw: a bounded filter, so a rule the
 * generator cannot meet (a pattern it only approximates) makes a rare invalid value, not a hang.
 */
function firstPassing<T>(arbitrary: fc.Arbitrary<T>, test: (value: T) => boolean, tries = 8): fc.Arbitrary<T> {
  return fc
    .array(arbitrary, { minLength: tries, maxLength: tries })
    .map((draws) => draws.find(test) ?? (draws.at(-1) as T))
}

function validString(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0
  const maxLength = schema.maxLength ?? Math.max(minLength, 64)
  const regex = schema.pattern === undefined ? undefined : compilePattern(schema.pattern)
  const fits = (value: string) =>
    codePoints(value) >= minLength && codePoints(value) <= maxLength && (regex?.test(value) ?? true)
  const candidates: fc.Arbitrary<string>[] = []
  switch (schema.format) {
    case 'uuid':
      candidates.push(fc.uuid())
      break
    case 'date-time':
      candidates.push(
        fc
          .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true })
          .map((date) => date.toISOString()),
      )
      break
    case 'date':
      candidates.push(
        fc
          .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true })
          .map((date) => date.toISOString().slice(0, 10)),
      )
      break
    case 'email':
      candidates.push(fc.emailAddress())
      break
    case 'uri':
    case 'url':
      candidates.push(fc.webUrl())
      break
  }
  if (schema.pattern !== undefined) {
    candidates.push(fc.stringMatching(compilePattern(withoutLookarounds(schema.pattern))))
  }
  if (candidates.length === 0) {
    const cap = Math.min(maxLength, 200)
    candidates.push(
      fc.string({ minLength, maxLength: cap }),
      fc.string({ unit: 'binary', minLength, maxLength: cap }),
      // The bounds themselves: one character more or less is the classic off-by-one.
      fc.constantFrom('x'.repeat(minLength), 'y'.repeat(Math.min(maxLength, 100_000))),
      // Valid by the schema, hostile to what comes after it: NUL to PostgreSQL, bidi to a screen.
      fc.constantFrom(...nastyStrings),
    )
  }
  return firstPassing(fc.oneof(...candidates), fits)
}

function validNumber(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const low = schema.exclusiveMinimum === undefined ? schema.minimum : schema.exclusiveMinimum + (integer ? 1 : 0)
  const high = schema.exclusiveMaximum === undefined ? schema.maximum : schema.exclusiveMaximum - (integer ? 1 : 0)
  if (integer) {
    const min = Math.ceil(low ?? -(2 ** 40))
    const max = Math.floor(high ?? 2 ** 40)
    return fc.oneof(fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number), fc.constantFrom(min, max))
  }
  return fc.double({
    min: low ?? -1e12,
    max: high ?? 1e12,
    noNaN: true,
    noDefaultInfinity: true,
    minExcluded: schema.exclusiveMinimum !== undefined,
    maxExcluded: schema.exclusiveMaximum !== undefined,
  })
}

/** Any JSON value, a few levels deep, with the odd hostile string or number. */
export function anyJson(): fc.Arbitrary<unknown> {
  return fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom(...nastyStrings),
    fc.constantFrom(...hugeNumbers),
  )
}

function withKnown(name: string | undefined, options: FuzzOptions, arbitrary: fc.Arbitrary<unknown>) {
  const known = name === undefined ? undefined : options.known?.[name]
  return known && known.length > 0 ? fc.oneof(fc.constantFrom(...known), arbitrary) : arbitrary
}

/** Values a route's schema accepts: types, enums and constants, bounds, patterns, formats, optional fields. */
export function validValue(schema: JsonSchema, options: FuzzOptions = {}, name?: string): fc.Arbitrary<unknown> {
  const refined = name === undefined ? undefined : options.refine?.[name]
  // A refinement is final: its own parts are not refined again by the same name.
  const generated = refined ? generateValid(refined, options, undefined) : generateValid(schema, options, name)
  return withKnown(name, options, generated)
}

function generateValid(schema: JsonSchema, options: FuzzOptions, name: string | undefined): fc.Arbitrary<unknown> {
  if ('const' in schema) {
    return fc.constant(schema.const)
  }
  if (schema.enum) {
    return fc.constantFrom(...schema.enum)
  }
  const branches = schema.anyOf ?? schema.oneOf
  if (branches) {
    return fc.oneof(...branches.map((branch) => validValue(branch, options, name)))
  }
  if (schema.allOf) {
    return validValue(mergeAll(schema.allOf), options, name)
  }
  const types = schemaTypes(schema)
  if (types.length > 1) {
    return fc.oneof(...types.map((type) => validValue({ ...schema, type }, options, name)))
  }
  switch (types[0]) {
    case 'string':
      return validString(schema)
    case 'integer':
      return validNumber(schema, true)
    case 'number':
      return validNumber(schema, false)
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      return validArray(schema, options, name)
    case 'object':
      return validObject(schema, options)
    default:
      return anyJson()
  }
}

function mergeAll(parts: JsonSchema[]): JsonSchema {
  return {
    ...Object.assign({}, ...parts),
    properties: Object.assign({}, ...parts.map((part) => part.properties)),
    required: parts.flatMap((part) => part.required ?? []),
  }
}

function validArray(schema: JsonSchema, options: FuzzOptions, name: string | undefined): fc.Arbitrary<unknown[]> {
  const item = validValue(schema.items ?? {}, options, name)
  const minLength = schema.minItems ?? 0
  const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? 5, 5))
  return schema.uniqueItems
    ? fc.uniqueArray(item, { minLength, maxLength, selector: (value) => JSON.stringify(value) })
    : fc.array(item, { minLength, maxLength })
}

function validObject(schema: JsonSchema, options: FuzzOptions): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {}
  const required = schema.required ?? []
  const record = fc.record(
    Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, validValue(value, options, key)])),
    { requiredKeys: required.filter((key) => key in properties) },
  )
  const openTo =
    Object.values(schema.patternProperties ?? {})[0] ??
    (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined)
  const extra = openTo
    ? fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), validValue(openTo, options), { maxKeys: 4 })
    : fc.constant({})
  const combined = fc.tuple(extra, record).map(([more, known]) => ({ ...more, ...known }))
  const minProperties = schema.minProperties ?? 0
  return minProperties <= required.length
    ? combined
    : firstPassing(combined, (value) => Object.keys(value).length >= minProperties)
}

/**
 * Values that break a route's schema: wrong types, out-of-range numbers, oversize and hostile
 * strings, bad formats, missing or extra (prototype-polluting) fields, huge arrays, deep garbage.
 */
export function invalidValue(schema: JsonSchema, options: FuzzOptions = {}): fc.Arbitrary<unknown> {
  const variants: fc.Arbitrary<unknown>[] = [wrongType(schema), anyJson()]
  if (schema.enum || 'const' in schema) {
    const allowed = schema.enum ?? [schema.const]
    variants.push(
      fc.constantFrom(...allowed.map((value) => (typeof value === 'string' ? ` ${value.toUpperCase()}` : 'other'))),
      fc.string({ maxLength: 20 }).filter((value) => !allowed.includes(value)),
    )
  }
  const branches = schema.anyOf ?? schema.oneOf ?? schema.allOf
  if (branches) {
    variants.push(...branches.map((branch) => invalidValue(branch, options)))
  }
  for (const type of schemaTypes(schema)) {
    switch (type) {
      case 'string':
        variants.push(invalidString(schema))
        break
      case 'integer':
      case 'number':
        variants.push(invalidNumber(schema, type === 'integer'))
        break
      case 'array':
        variants.push(invalidArray(schema, options))
        break
      case 'object':
        variants.push(invalidObject(schema, options))
        break
    }
  }
  return fc.oneof(...variants)
}

function wrongType(schema: JsonSchema): fc.Arbitrary<unknown> {
  const types = schemaTypes(schema)
  const all: [string, fc.Arbitrary<unknown>][] = [
    ['string', fc.constantFrom('1', 'true', 'a string')],
    ['integer', fc.constantFrom(1, -7, 0)],
    ['number', fc.constantFrom(1.5, -0.25)],
    ['boolean', fc.boolean()],
    ['null', fc.constant(null)],
    ['array', fc.constantFrom([], [1, 'two'], [null])],
    ['object', fc.constantFrom({}, { a: 1 }, { length: 1e9 })],
  ]
  const others = all.filter(([type]) => !types.includes(type) && !(type === 'integer' && types.includes('number')))
  return fc.oneof(...others.map(([, arbitrary]) => arbitrary))
}

function invalidString(schema: JsonSchema): fc.Arbitrary<unknown> {
  const variants: fc.Arbitrary<unknown>[] = [
    fc.constantFrom(...nastyStrings),
    fc.string({ unit: 'binary', maxLength: 40 }),
    // Oversize: past any limit a field should have, and past the declared one.
    fc.constantFrom('a'.repeat(100_000), '💥'.repeat(20_000)),
  ]
  if (schema.maxLength !== undefined) {
    variants.push(fc.constant('m'.repeat(schema.maxLength + 1)))
  }
  if (schema.minLength !== undefined && schema.minLength > 0) {
    variants.push(fc.constant('n'.repeat(schema.minLength - 1)))
  }
  if (schema.format) {
    variants.push(
      fc.constantFrom(
        'not-a-uuid',
        '00000000-0000-0000-0000-00000000000g',
        '00000000-0000-4000-8000-000000000000x',
        '2026-13-45T25:61:61Z',
        '@@',
        'javascript:alert(1)',
        'http://',
      ),
    )
  }
  return fc.oneof(...variants)
}

function invalidNumber(schema: JsonSchema, integer: boolean): fc.Arbitrary<unknown> {
  const bounds: number[] = []
  if (schema.minimum !== undefined) {
    bounds.push(schema.minimum - 1, schema.minimum - 0.5)
  }
  if (schema.maximum !== undefined) {
    bounds.push(schema.maximum + 1, schema.maximum * 10 + 1)
  }
  if (integer) {
    bounds.push(1.5)
  }
  return fc.oneof(
    fc.constantFrom(...hugeNumbers, ...bounds),
    // The text forms a query string carries, coerced by the server.
    fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e400', '99999999999999999999999', '0x1F', '1_000', ' 1'),
  )
}

function invalidArray(schema: JsonSchema, options: FuzzOptions): fc.Arbitrary<unknown> {
  const item = validValue(schema.items ?? {}, options)
  return fc.oneof(
    fc.array(invalidValue(schema.items ?? {}, options), { minLength: 1, maxLength: 3 }),
    fc.constant(Array.from({ length: Math.max(schema.maxItems ?? 0, 10_000) + 1 }, (_, index) => index)),
    item.map((value) => Array.from({ length: (schema.maxItems ?? 100) + 1 }, () => value)),
    schema.uniqueItems ? item.map((value) => [value, value]) : fc.constant([[[[[[]]]]]]),
  )
}

function invalidObject(schema: JsonSchema, options: FuzzOptions): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {}
  const keys = Object.keys(properties)
  const valid = validObject(schema, options)
  const variants: fc.Arbitrary<unknown>[] = [
    // An extra field, a prototype-polluting one included: JSON.parse makes `__proto__` an own key.
    fc
      .tuple(valid, fc.constantFrom('unexpected', ...protoKeys), anyJson())
      .map(([value, key, extra]) => Object.fromEntries([...Object.entries(value), [key, extra]])),
    fc
      .tuple(valid, fc.constantFrom(...protoKeys))
      .map(([value, key]) => Object.fromEntries([...Object.entries(value), [key, { polluted: true, isAdmin: true }]])),
    fc.constant(Object.fromEntries([['__proto__', { toString: 'x' }]])),
  ]
  if (schema.required && schema.required.length > 0) {
    variants.push(
      fc.tuple(valid, fc.constantFrom(...schema.required)).map(([value, missing]) => {
        const { [missing]: _, ...rest } = value as Record<string, unknown>
        return rest
      }),
    )
  }
  if (keys.length > 0) {
    variants.push(
      fc
        .tuple(valid, fc.constantFrom(...keys))
        .chain(([value, key]) =>
          invalidValue(properties[key] ?? {}, options).map((bad) => ({ ...(value as object), [key]: bad })),
        ),
    )
  }
  return fc.oneof(...variants)
}

// Requests ---------------------------------------------------------------------------------------

/** Percent-encodes every byte outside the unreserved set, as a client building a URL does. */
export function percentEncode(value: string): string {
  return [...Buffer.from(value, 'utf8')]
    .map((byte) => {
      const char = String.fromCharCode(byte)
      return /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
    })
    .join('')
}

const asText = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))

/** A query string as a browser's URLSearchParams writes it; arrays repeat their key. */
export function encodeQuery(query: Record<string, unknown>): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      params.append(key, asText(one))
    }
  }
  const text = params.toString()
  return text === '' ? '' : `?${text}`
}

/** Query strings no well-behaved client writes: broken escapes, bare separators, overlong UTF-8. */
const rawQueries = ['?%', '?a=%zz', '?%C0%80=1', '?&&&=', '?=', '?a', '?a[b]=1&a[c]=2', '?__proto__[x]=1', '?;']

/** Path segments no well-behaved client writes: broken escapes, dot segments, overlong UTF-8. */
const rawSegments = ['%', '%zz', '%E0%A4%A', '%C0%AE%C0%AE', '..', '.', '%2e%2e', '%2F', '%00', '%u0041', '+']

/** The route's URL with its params filled in: percent-encoded values, or one raw segment for all. */
function substituteParams(url: string, params: unknown): string {
  return url.replace(/:([A-Za-z_]\w*)/g, (_, key: string) =>
    typeof params === 'string' ? params : percentEncode(asText((params as Record<string, unknown>)[key] ?? '')),
  )
}

type RouteSchema = { body?: JsonSchema; querystring?: JsonSchema; params?: JsonSchema }

function routeSchema(route: FuzzRoute): RouteSchema {
  return (route.schema ?? {}) as RouteSchema
}

/** Params of a route without a declared schema: one string each. */
function paramsSchema(route: FuzzRoute, schema: RouteSchema): JsonSchema {
  if (schema.params) {
    return schema.params
  }
  const names = [...route.url.matchAll(/:([A-Za-z_]\w*)/g)].map((match) => match[1] as string)
  return {
    type: 'object',
    required: names,
    properties: Object.fromEntries(names.map((name) => [name, { type: 'string', minLength: 1, maxLength: 64 }])),
  }
}

const json = 'application/json'

/** Body texts with a JSON content type that no JSON parser accepts. */
const brokenJson = fc.oneof(
  fc.constantFrom('{', '{"a":}', '{"a":1,}', "{'a':1}", 'nul', '[1,2', '{"a":1}}', '{"a":"\\x"}', 'NaN'),
  fc.jsonValue({ maxDepth: 2 }).map((value) => `${JSON.stringify(value)}garbage`),
)

/** JSON in odd bytes: not UTF-8 (decoders substitute U+FFFD) or behind a byte-order mark; both may parse. */
const oddBytes = fc.constantFrom(
  Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]),
  Buffer.from('\ufeff{}'),
)

/** Content types the JSON API has no parser for; the body must be refused before any handler. */
const unparsedTypes = [
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'image/png',
  'application/jsonx',
]

const oversize = (bytes: number) => `{"a":"${'x'.repeat(bytes)}"}`

/** Nesting a recursive parser, validator or serializer overflows its stack on. */
const deepDepths = fc.constantFrom(10_000, 100_000)
const deepMarker = 'DEEP-NESTING-GOES-HERE'

export type RequestFuzzOptions = FuzzOptions & {
  /**
   * Only requests that must be refused before any handler runs (unparseable bodies): for routes
   * whose success would end the caller's own session or change how the server signs people in.
   */
  refusedOnly?: boolean
  /** The server's body limit, to send one byte more than it. */
  bodyLimit?: number
}

type Body = { payload?: string | Buffer; type?: string }
type Parts = { params: unknown; query: string; body: Body }

/**
 * Requests for one route, built from its own schemas: valid ones, and ones with malformed params,
 * query, body, JSON text, content type or size. Params and query are URL-encoded as a client does.
 */
export function fuzzedRequest(route: FuzzRoute, options: RequestFuzzOptions = {}): fc.Arbitrary<FuzzedRequest> {
  const schema = routeSchema(route)
  const params = paramsSchema(route, schema)
  const hasParams = Object.keys(params.properties ?? {}).length > 0
  const hasBody = !['GET', 'HEAD'].includes(route.method)
  const bodyIsObject = schema.body !== undefined && schemaTypes(schema.body).every((type) => type === 'object')
  const bodyLimit = options.bodyLimit ?? 1024 * 1024
  const query = (value: unknown) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? encodeQuery(value as Record<string, unknown>)
      : encodeQuery({ q: value })
  const jsonBody = (value: unknown): Body => (value === undefined ? {} : { payload: JSON.stringify(value), type: json })
  const validBody = schema.body ? validValue(schema.body, options) : fc.constant(undefined)

  /** A request whose parts are valid except those given. */
  const parts = (given: { params?: fc.Arbitrary<unknown>; query?: fc.Arbitrary<string>; body?: fc.Arbitrary<Body> }) =>
    fc.record<Parts>({
      params: given.params ?? validValue(params, options),
      query: given.query ?? (schema.querystring ? validValue(schema.querystring, options).map(query) : fc.constant('')),
      body: given.body ?? validBody.map(jsonBody),
    })
  const variant = (label: string, arbitrary: fc.Arbitrary<Parts>, weight = 1) => ({
    weight,
    arbitrary: arbitrary.map(
      ({ params: values, query: text, body }): FuzzedRequest => ({
        method: route.method,
        url: `${substituteParams(route.url, values)}${text}`,
        headers: body.type ? { 'content-type': body.type } : {},
        ...(hasBody && body.payload !== undefined ? { payload: body.payload } : {}),
        variant: label,
      }),
    ),
  })

  const refused = hasBody
    ? [
        variant('broken JSON', parts({ body: brokenJson.map((payload) => ({ payload, type: json })) })),
        variant(
          'content type without a parser',
          parts({
            body: fc
              .tuple(validBody, fc.constantFrom(...unparsedTypes))
              .map(([value, type]) => ({ payload: JSON.stringify(value ?? {}), type })),
          }),
        ),
        variant('empty JSON body', parts({ body: fc.constant({ payload: '', type: json }) })),
        variant('body over the limit', parts({ body: fc.constant({ payload: oversize(bodyLimit), type: json }) })),
        ...(bodyIsObject
          ? [
              variant(
                'JSON that is not an object',
                parts({
                  body: fc
                    .constantFrom('[]', '"text"', '1', 'null', 'true')
                    .map((payload) => ({ payload, type: json })),
                }),
              ),
            ]
          : []),
      ]
    : []
  if (options.refusedOnly) {
    if (refused.length === 0) {
      throw new Error(`${route.method} ${route.url} takes no body: nothing can be refused before its handler`)
    }
    return fc.oneof(...refused)
  }

  // Every param wrong at once: a URL has no way to leave one out.
  const invalidParams = fc.record(
    Object.fromEntries(
      Object.entries(params.properties ?? {}).map(([key, schema]) => [key, invalidValue(schema, options)]),
    ),
  )
  const deepBody = fc.tuple(validBody, deepDepths).map(([value, depth]): Body => {
    const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`
    // Inside a field when there is a body, so the parser passes it on to validation and the handler.
    const keys = Object.keys(schema.body?.properties ?? {})
    const field = keys.find((key) => schema.body?.properties?.[key]?.type === 'object') ?? keys[0] ?? 'nested'
    const text = bodyIsObject ? JSON.stringify({ ...(value as object), [field]: deepMarker }) : `"${deepMarker}"`
    return { payload: text.replace(`"${deepMarker}"`, deep), type: json }
  })
  return fc.oneof(
    // Valid requests weigh most: they reach the handlers, where 5xx answers come from.
    variant('valid', parts({}), 6),
    ...(hasParams
      ? [
          variant('malformed params', parts({ params: invalidParams }), 2),
          variant('raw params', parts({ params: fc.constantFrom(...rawSegments) })),
        ]
      : []),
    variant(
      'malformed query',
      parts({ query: (schema.querystring ? invalidValue(schema.querystring, options) : anyJson()).map(query) }),
      2,
    ),
    variant('raw query', parts({ query: fc.constantFrom(...rawQueries) })),
    ...(hasBody
      ? [
          variant(
            'malformed body',
            parts({ body: (schema.body ? invalidValue(schema.body, options) : anyJson()).map(jsonBody) }),
            3,
          ),
          variant('deep nesting', parts({ body: deepBody })),
          variant('odd bytes', parts({ body: oddBytes.map((payload) => ({ payload, type: json })) })),
          variant(
            'JSON as text/plain',
            parts({ body: validBody.map((value) => ({ payload: JSON.stringify(value ?? {}), type: 'text/plain' })) }),
          ),
          ...refused,
        ]
      : []),
  )
}

// Running ----------------------------------------------------------------------------------------

/** 32-bit FNV-1a: a per-route seed that stays put when routes are added or removed. */
function hash(text: string): number {
  let value = 0x811c9dc5
  for (const char of text) {
    value = Math.imul(value ^ (char.codePointAt(0) ?? 0), 0x01000193)
  }
  return value | 0
}

export const defaultFuzzSeed = 20_260_301

/** The most one route's runs and shrinking may take; give each fuzz test a longer timeout. */
export const fuzzBudgetMs = 90_000
const maxShrinkRuns = 300

/**
 * Runs `predicate` over `arbitrary` for one route, reproducibly: the seed comes from FUZZ_SEED (or
 * a fixed default) and the route's name; FUZZ_RUNS scales every route's run count; FUZZ_PATH
 * replays one counterexample. A run longer than `hangAfterMs` fails as a hang; a route's runs stop
 * after `fuzzBudgetMs`. The failure shows the shrunk request, the assertion it broke and the
 * command that replays it. Returns how many runs were made.
 */
export async function fuzzCheck<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  { numRuns, hangAfterMs = 10_000, command }: { numRuns: number; hangAfterMs?: number; command: string },
): Promise<number> {
  const base = Number(process.env.FUZZ_SEED ?? defaultFuzzSeed)
  const scale = Number(process.env.FUZZ_RUNS ?? 1)
  // The servers keep state, so a shrunk case may pass only because an earlier one changed it:
  // shrinking stops after a few hundred tries and reports the smallest failure found by then.
  let failed = false
  let shrinkRuns = 0
  const guarded = async (value: T) => {
    if (failed && ++shrinkRuns > maxShrinkRuns) {
      return
    }
    try {
      await predicate(value)
    } catch (err) {
      failed = true
      throw err
    }
  }
  const details = await fc.check(fc.asyncProperty(arbitrary, guarded), {
    seed: hash(`${base}:${name}`),
    numRuns: Math.max(1, Math.round(numRuns * scale)),
    timeout: hangAfterMs,
    // Shrinking a hang costs `hangAfterMs` a step: report the smallest case found by then.
    interruptAfterTimeLimit: fuzzBudgetMs,
    ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
  })
  if (details.failed) {
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
    const filter = `${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`
    const replay = `FUZZ_SEED=${base} FUZZ_PATH=${details.counterexamplePath} ${command} -t '${filter}'`
    throw new Error(`${name}: ${fc.defaultReportMessage(details)}\n${cause}\nReplay: ${replay}`)
  }
  return details.numRuns
}
