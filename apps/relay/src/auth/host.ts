const loopbackHosts = new Set(['127.0.0.1', 'localhost', '[::1]', '::1'])

/** Whether a host name (no port) names this machine's loopback interface. */
export const isLoopbackHost = (hostname: string) => loopbackHosts.has(hostname.toLowerCase())

/** A Host header's authority: a name or IPv4 address, or a bracketed IPv6 address, then an optional port. */
const authority = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/**
 * The host name of a Host header, or null when the header is not a plain authority. Anything a
 * URL parser would read as user info, a path or a second host (`127.0.0.1:8080@evil.example`,
 * `127.0.0.1/x`, `a b`) is refused rather than guessed at.
 */
export function hostnameOf(host: string): string | null {
  if (!authority.test(host)) {
    return null
  }
  return new URL(`http://${host}`).hostname.toLowerCase()
}
