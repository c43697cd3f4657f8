import { createServer, type IncomingHttpHeaders, request } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request through the proxy and its answer, bodies included. */
export type Exchange = {
  method: string
  /** Path and query as the client sent them. */
  url: string
  requestHeaders: IncomingHttpHeaders
  requestBody: Buffer
  status: number
  responseHeaders: IncomingHttpHeaders
  responseBody: Buffer
}

/**
 * A network in front of a server that passes everything on unchanged (Host header included, so
 * the server builds its addresses from the proxy's) and keeps a copy of every exchange: what a
 * test needs to know every credential that went over the wire.
 */
export async function startRecordingProxy() {
  let target = ''
  const exchanges: Exchange[] = []
  const server = createServer((req, res) => {
    const requestChunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => requestChunks.push(chunk))
    const upstream = request(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        const responseChunks: Buffer[] = []
        answer.on('data', (chunk: Buffer) => {
          responseChunks.push(chunk)
          res.write(chunk)
        })
        answer.on('end', () => {
          // Recorded before the client sees the end, so a finished request is always in the list.
          exchanges.push({
            method: req.method ?? 'GET',
            url: req.url ?? '/',
            requestHeaders: req.headers,
            requestBody: Buffer.concat(requestChunks),
            status: answer.statusCode ?? 502,
            responseHeaders: answer.headers,
            responseBody: Buffer.concat(responseChunks),
          })
          res.end()
        })
      },
    )
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    forwardTo(url: string) {
      target = url
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export type RecordingProxy = Awaited<ReturnType<typeof startRecordingProxy>>
