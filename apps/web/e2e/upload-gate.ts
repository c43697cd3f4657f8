import http from 'node:http'
import { freePort } from '@relay/testkit'
import { EMBEDDED_S3_PREFIX } from '../../cloud/src/storage/create-object-store.js'
import { startTestCloud, type TestCloud } from '../../cloud/test/cloud-server.js'

/**
 * A test cloud reached only through a proxy that can hold uploads to its object store: a backup then
 * stays in its upload stage until the test lets it go, however fast the machine packs the archive.
 * The cloud's public address is the proxy's, so sign-in, the API and the presigned URLs all pass it.
 */
export async function startCloudWithUploadGate() {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const cloud = await startTestCloud('pglite', { env: { CLOUD_PUBLIC_URL: url } })
  const backend = new URL(cloud.url)
  let gate: { opened: Promise<void>; open: () => void } | undefined

  const proxy = http.createServer((request, response) => {
    const forward = () => {
      const upstream = http.request(
        {
          host: backend.hostname,
          port: backend.port,
          method: request.method,
          path: request.url,
          headers: request.headers,
        },
        (reply) => {
          response.writeHead(reply.statusCode ?? 502, reply.headers)
          reply.pipe(response)
        },
      )
      upstream.on('error', () => response.destroy())
      request.pipe(upstream)
    }
    const isUpload = request.method === 'PUT' && request.url?.startsWith(`${EMBEDDED_S3_PREFIX}/`)
    if (isUpload && gate) {
      void gate.opened.then(forward)
    } else {
      forward()
    }
  })
  await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve))

  const gated: TestCloud = {
    ...cloud,
    url,
    async close() {
      gate?.open()
      proxy.closeAllConnections()
      await new Promise((resolve) => proxy.close(resolve))
      await cloud.close()
    },
  }
  return {
    cloud: gated,
    /** Uploads that start from now on wait until `release`. */
    hold() {
      let open = () => {}
      const opened = new Promise<void>((resolve) => {
        open = resolve
      })
      gate = { opened, open }
    },
    release() {
      gate?.open()
      gate = undefined
    },
  }
}
