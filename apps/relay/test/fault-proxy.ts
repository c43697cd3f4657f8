import { createServer, type IncomingMessage, request } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the proxy does with one request instead of passing it on. */
export type Fault = 'refuse' | 'swallow' | 'stall'

/**
 * A network between the relay and the cloud that passes everything on unchanged (Host header
 * included, so signatures still match) unless `fault` names a fault for the request: `refuse`
 * answers like a store that rejects it, `swallow` answers 200 without delivering it, `stall` takes
 * the body and never answers (the sender waits until it gives up or goes away).
 */
export async function startFaultProxy() {
  let target = ''
  let fault: (req: IncomingMessage) => Fault | undefined = () => undefined
  const server = createServer((req, res) => {
    const chosen = fault(req)
    if (chosen) {
      req.resume()
      if (chosen === 'stall') {
        return
      }
      req.on('end', () => {
        if (chosen === 'refuse') {
          res.writeHead(403, { 'content-type': 'application/xml' })
          res.end('<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Refused</Message></Error>')
        } else {
          res.writeHead(200)
          res.end()
        }
      })
      return
    }
    const upstream = request(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    forwardTo(url: string) {
      target = url
    },
    inject(decide: (req: IncomingMessage) => Fault | undefined) {
      fault = decide
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
