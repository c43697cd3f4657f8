import { request as httpRequest } from 'node:http'

/** A concrete path for a route pattern: every `:param` and `*` gets a harmless value. */
export function samplePath(url: string, value = 'probe-1'): string {
  return url.replace(/:[A-Za-z_]\w*/g, value).replace(/\*$/, 'index.html')
}

const encodeChar = (char: string) => `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`

/**
 * The ways one path can be written so that some router, proxy or guard reads it differently:
 * percent-encoded letters and slashes, doubled slashes, dot segments, case, a trailing slash and a
 * `;` parameter. (A raw backslash never gets that far: Node's HTTP parser refuses it.) A guard that decides on the matched route refuses every one of them alike.
 */
export function pathForms(path: string): Record<string, string> {
  const segments = path.split('/')
  const first = segments[1] ?? ''
  const last = segments.at(-1) ?? ''
  const encodeFirstLetter = (segment: string) => segment.replace(/[a-z]/i, encodeChar)
  const lastIndex = segments.length - 1
  return {
    plain: path,
    'encoded first letter': ['', encodeFirstLetter(first), ...segments.slice(2)].join('/'),
    'encoded upper-case hex': ['', encodeFirstLetter(first).toUpperCase(), ...segments.slice(2)].join('/'),
    'encoded letter in last segment': [...segments.slice(0, lastIndex), encodeFirstLetter(last)].join('/'),
    'fully encoded first segment': ['', [...first].map(encodeChar).join(''), ...segments.slice(2)].join('/'),
    'encoded slash': `/${first}%2F${segments.slice(2).join('/')}`,
    'encoded slash lower-case': `/${first}%2f${segments.slice(2).join('/')}`,
    'doubled slash': `/${segments.slice(1).join('//')}`,
    'leading doubled slash': `/${path}`,
    'dot segment': `/${first}/.${path.slice(first.length + 1)}`,
    'dot-dot segment': `/${first}/x/..${path.slice(first.length + 1)}`,
    'encoded dot segment': `/${first}/%2e${path.slice(first.length + 1)}`,
    'upper case': path.toUpperCase(),
    'trailing slash': `${path}/`,
    'semicolon parameter': `${path};x`,
    'encoded backslash separator': `/${first}%5C${segments.slice(2).join('/')}`,
  }
}

export type RawResponse = { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/**
 * One HTTP request whose path is sent exactly as written: `fetch` and `inject` normalise dot
 * segments and encodings, which is the very thing an attack test must not do.
 */
export function rawRequest(
  port: number,
  options: { method: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: options.method,
        path: options.path,
        headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
        agent: false,
        setHost: options.headers?.host === undefined,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        )
        res.on('error', reject)
      },
    )
    req.setTimeout(10_000, () => req.destroy(new Error(`${options.method} ${options.path} timed out`)))
    req.on('error', (err) => reject(new Error(`${options.method} ${options.path}: ${err.message}`, { cause: err })))
    req.end(options.body)
  })
}
