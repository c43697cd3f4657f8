import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Local HTTP servers that tests of sources talk to; `closeServers` ends them after each test. */
export const servers: Server[] = []

/** Starts `server` on a free local port; its base URL. */
export async function listenLocally(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push(server)
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

export async function closeServers(): Promise<void> {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Reads until `ok` holds or the time is up; the last value read either way. */
export async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (ok(value) || Date.now() > deadline) {
      return value
    }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
