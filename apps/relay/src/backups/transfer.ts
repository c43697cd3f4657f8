import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { request as httpRequest, type IncomingMessage } from 'node:http'
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
    // 1 MiB reads: a sixteenth of the default's system calls and writes to the socket.
    pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), counter(onProgress), req).catch(reject)
  })
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
