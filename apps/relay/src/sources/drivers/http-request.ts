import http from 'node:http'
import https from 'node:https'
import { AddressRefusedError, type Reach } from '../reach.js'

const maxRedirects = 5

export type HttpRequest = {
  method: 'GET' | 'POST'
  headers: Record<string, string>
  body?: string
  signal: AbortSignal
  /** Answers longer than this fail instead of filling memory. */
  maxBytes: number
}

export type HttpAnswer = { status: number; body: Buffer }

/**
 * One HTTP request by the rules of `reach`, following redirects. fetch() cannot take a resolver,
 * so this uses node:http: every hop is checked as written and again at connect time through the
 * reach's lookup. An Authorization header is dropped at the first redirect to another origin, so
 * a token only ever goes to the server it was given for.
 */
export async function httpRequest(reach: Reach, url: string, request: HttpRequest): Promise<HttpAnswer> {
  let target = new URL(url)
  let { method, body } = request
  const headers = { ...request.headers }
  for (let hop = 0; ; hop++) {
    const refusal = reach.refusalOfUrl(target)
    if (refusal) {
      throw new AddressRefusedError(`Cannot reach ${target}: ${refusal}`)
    }
    const response = await send(reach, target, { method, headers, body, signal: request.signal }).catch(
      (err: unknown) => {
        throw request.signal.aborted ? err : new Error(`Cannot reach ${target}: ${messageOf(err)}`)
      },
    )
    const location = response.headers.location
    if (!isRedirect(response.statusCode) || location === undefined) {
      return { status: response.statusCode ?? 0, body: await readBody(response, request.maxBytes, url) }
    }
    response.resume()
    if (hop === maxRedirects) {
      throw new Error(`${url} redirected more than ${maxRedirects} times`)
    }
    const next = new URL(location, target)
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new Error(`${url} redirected to a ${next.protocol} address`)
    }
    if (next.origin !== target.origin) {
      delete headers.authorization
    }
    // As browsers do: 303, and 301/302 after a POST, continue with a GET without the body.
    if (
      response.statusCode === 303 ||
      (method === 'POST' && response.statusCode !== 307 && response.statusCode !== 308)
    ) {
      method = 'GET'
      body = undefined
      delete headers['content-type']
    }
    target = next
  }
}

function isRedirect(status: number | undefined): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308
}

function send(
  reach: Reach,
  target: URL,
  { method, headers, body, signal }: Omit<HttpRequest, 'maxBytes'>,
): Promise<http.IncomingMessage> {
  const client = target.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    const outgoing = client.request(target, { method, headers, signal, agent: reach.agentFor(target) }, resolve)
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

async function readBody(response: http.IncomingMessage, maxBytes: number, url: string): Promise<Buffer> {
  const chunks: Buffer[] = []
  let length = 0
  for await (const chunk of response) {
    length += (chunk as Buffer).length
    if (length > maxBytes) {
      response.destroy()
      throw new Error(`${url} answered with more than ${Math.round(maxBytes / 1024 / 1024)} MB`)
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

/** Node reports a refused dual-stack connect as an AggregateError without a message. */
function messageOf(err: unknown): string {
  if (err instanceof AggregateError && !err.message) {
    return err.errors.map(messageOf).join('; ')
  }
  return err instanceof Error ? err.message || String((err as { code?: unknown }).code ?? err.name) : String(err)
}
