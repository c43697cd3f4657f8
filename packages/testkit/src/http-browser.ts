import { createServer } from 'node:net'

/** A port that was free a moment ago, for servers that must know their address before they listen. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/**
 * What a browser does with plain HTTP: keeps cookies per host and follows nothing by itself,
 * so a test sees every redirect of a sign-in flow and decides where it goes next.
 */
export function createHttpBrowser() {
  const jars = new Map<string, Map<string, string>>()

  function jarFor(url: URL) {
    let jar = jars.get(url.host)
    if (!jar) {
      jar = new Map()
      jars.set(url.host, jar)
    }
    return jar
  }

  async function request(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url)
    const jar = jarFor(target)
    const headers = new Headers(init.headers)
    if (jar.size > 0) {
      headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '))
    }
    const response = await fetch(target, { ...init, headers, redirect: 'manual' })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = cookie.split(';')
      const at = pair.indexOf('=')
      const name = pair.slice(0, at).trim()
      const expired = attributes.some((attr) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(attr))
      if (expired) {
        jar.delete(name)
      } else {
        jar.set(name, pair.slice(at + 1).trim())
      }
    }
    return response
  }

  return {
    request,
    /** Follows redirects while `keepGoing` says so; returns the first response it stops at. */
    async follow(
      url: string | URL,
      keepGoing: (next: URL) => boolean = () => true,
      limit = 10,
    ): Promise<{ response: Response; url: URL }> {
      let current = new URL(url)
      for (let hop = 0; hop <= limit; hop++) {
        const response = await request(current)
        const location = response.headers.get('location')
        if (response.status < 300 || response.status >= 400 || !location) {
          return { response, url: current }
        }
        const next = new URL(location, current)
        if (!keepGoing(next)) {
          return { response, url: next }
        }
        await response.body?.cancel()
        current = next
      }
      throw new Error(`more than ${limit} redirects from ${url}`)
    },
    cookies: (host: string) => new Map(jars.get(host) ?? []),
  }
}

export type HttpBrowser = ReturnType<typeof createHttpBrowser>

/** Submits an HTML form the way a browser would (urlencoded), without following the answer. */
export function submitForm(browser: HttpBrowser, action: string | URL, fields: Record<string, string>) {
  return browser.request(action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  })
}
