import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { AppError } from '@relay/contracts'

/** A silent connection this long is given up. */
const idleTimeoutMs = 60_000

type Progress = (bytesDone: number) => void

function counter(onProgress: Progress, hash?: ReturnType<typeof createHash>) {
  let done = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      done += chunk.length
      hash?.update(chunk)
      onProgress(done)
      callback(null, chunk)
    },
  })
}

async function readText(response: IncomingMessage, max = 4096): Promise<string> {
  let text = ''
  for await (const chunk of response) {
    if (text.length < max) {
      text += String(chunk)
    }
  }
  return text.slice(0, max)
}

/** The S3 error code of an XML error body, e.g. `SignatureDoesNotMatch`. */
function s3Code(body: string): string {
  return /<Code>([^<]+)<\/Code>/.exec(body)?.[1] ?? 'no reason given'
}

/**
 * PUTs a file to a presigned URL as a stream (the file is never held in memory) with the exact
 * Content-Length and the headers the grant lists.
 */
export function uploadFile(
  url: string,
  headers: Record<string, string>,
  file: string,
  size: number,
  onProgress: Progress,
  signal?: AbortSignal,
): Promise<void> {
  const target = new URL(url)
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = request(target, {
      method: 'PUT',
      headers: { ...headers, 'content-length': String(size) },
      timeout: idleTimeoutMs,
      signal,
    })
    req.on('timeout', () => req.destroy(new Error('the object store stopped answering')))
    req.on('response', (response) => {
      const status = response.statusCode ?? 0
      if (status >= 200 && status < 300) {
        response.resume()
        response.on('end', resolve)
        return
      }
      readText(response).then(
        (body) =>
          reject(new AppError('UNAVAILABLE', `The object store refused the upload (${status} ${s3Code(body)})`)),
        reject,
      )
    })
    req.on('error', reject)
    sendFile(req, file, size, onProgress).catch((err: unknown) => req.destroy(err as Error))
  })
}

const sendBytes = 1024 * 1024

/**
 * Writes `size` bytes of `file` to `req` and ends it, through two 1 MiB buffers used in turn: one is
 * read while the other goes out, and a buffer is read into again only once the socket took it. A read
 * stream would allocate a buffer per chunk, and in a busy relay that churn costs more in garbage
 * collection than the upload itself.
 */
async function sendFile(req: ClientRequest, file: string, size: number, onProgress: Progress): Promise<void> {
  const handle = await open(file, 'r')
  try {
    const buffers = [Buffer.allocUnsafeSlow(sendBytes), Buffer.allocUnsafeSlow(sendBytes)]
    let sending: Promise<void> = Promise.resolve()
    for (let position = 0, turn = 0; position < size; turn++) {
      const buffer = buffers[turn % 2] as Buffer
      const { bytesRead } = await handle.read(buffer, 0, Math.min(sendBytes, size - position), position)
      if (bytesRead === 0) {
        throw new Error(`${file} ended before its ${size} bytes`)
      }
      await sending
      position += bytesRead
      const done = position
      sending = new Promise((resolve, reject) =>
        req.write(buffer.subarray(0, bytesRead), (err) => (err ? reject(err) : resolve(onProgress(done)))),
      )
    }
    await sending
    req.end()
  } finally {
    await handle.close()
  }
}

/** GETs a presigned URL into `file`, returning the SHA-256 (hex) and size of what arrived. */
export async function downloadFile(
  url: string,
  file: string,
  onProgress: Progress,
  signal?: AbortSignal,
): Promise<{ sha256: string; size: number }> {
  const target = new URL(url)
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(target, { method: 'GET', timeout: idleTimeoutMs, signal })
    req.on('timeout', () => req.destroy(new Error('the object store stopped answering')))
    req.on('response', resolve)
    req.on('error', reject)
    req.end()
  })
  const status = response.statusCode ?? 0
  if (status !== 200) {
    const body = await readText(response)
    throw new AppError('UNAVAILABLE', `The object store refused the download (${status} ${s3Code(body)})`)
  }
  const hash = createHash('sha256')
  let size = 0
  await pipeline(
    response,
    counter((done) => {
      size = done
      onProgress(done)
    }, hash),
    createWriteStream(file, { mode: 0o600 }),
  )
  return { sha256: hash.digest('hex'), size }
}
