// Worker-thread entry started by measureUsers: simulated users, each its own token and one request at a
// time (a closed loop, as a relay polls or backs up), and one UserLoadResult posted back. Only what
// ends inside the measured window counts; the warm-up before it is discarded.
import { createHash, randomBytes } from 'node:crypto'
import http from 'node:http'
import { createHistogram } from 'node:perf_hooks'
import { parentPort, workerData } from 'node:worker_threads'
import type { UserLoadRequest, UserLoadResult } from './users.ts'

const requestTimeoutMs = 10_000
/** After a failed step a user waits this long before its next cycle, as a relay retries later rather than at once. */
const pauseAfterFailureMs = 1000

type Answer = { status: number; text: string }

const { baseUrl, tokens, work, warmupSeconds, durationSeconds, uploadBytes } = workerData as UserLoadRequest
// One socket per user at most: each user has one request in flight.
const agent = new http.Agent({ keepAlive: true, maxSockets: tokens.length })
const latencyMicros = createHistogram()
const failures: Record<string, number> = {}
const failureSamples: string[] = []
let operations = 0
let requests = 0
let connectionErrors = 0
let firstFailureAt: number | undefined
let lastFailureAt: number | undefined

const measureFrom = Date.now() + warmupSeconds * 1000
const measureUntil = measureFrom + durationSeconds * 1000
const measuring = (at: number) => at >= measureFrom && at < measureUntil

function send(url: string, init: { method: string; headers: Record<string, string>; body?: Buffer | string }) {
  return new Promise<Answer>((resolve, reject) => {
    const request = http.request(url, { method: init.method, headers: init.headers, agent }, (reply) => {
      const chunks: Buffer[] = []
      reply.on('data', (chunk: Buffer) => chunks.push(chunk))
      reply.on('end', () => resolve({ status: reply.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
      reply.on('error', reject)
    })
    request.setTimeout(requestTimeoutMs, () => request.destroy(new Error('timed out')))
    request.on('error', reject)
    request.end(init.body)
  })
}

/** One request, counted when it ends inside the window; undefined when it failed (counted as a failure). */
async function call(
  step: string,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: Buffer | string },
): Promise<Answer | undefined> {
  let answer: Answer | undefined
  let failure: string | undefined
  try {
    answer = await send(url, init)
    if (answer.status < 200 || answer.status >= 300) {
      failure = String(answer.status)
    }
  } catch (err) {
    failure = 'connection'
    answer = { status: 0, text: (err as Error).message }
  }
  const at = Date.now()
  if (measuring(at)) {
    requests++
    if (failure !== undefined) {
      failures[failure] = (failures[failure] ?? 0) + 1
      if (failure === 'connection') {
        connectionErrors++
      }
      firstFailureAt ??= at
      lastFailureAt = at
      if (failureSamples.length < 5) {
        failureSamples.push(`${step} ${failure}: ${answer.text.slice(0, 200)}`)
      }
    }
  }
  return failure === undefined ? answer : undefined
}

const pause = () => new Promise((resolve) => setTimeout(resolve, pauseAfterFailureMs))

/** Counts an operation that ended inside the window, like a load generator counts responses. */
function record(started: number) {
  if (measuring(Date.now())) {
    operations++
    latencyMicros.record(Math.max(1, Math.round((performance.now() - started) * 1000)))
  }
}

async function pollStatus(token: string) {
  const headers = { authorization: `Bearer ${token}` }
  while (Date.now() < measureUntil) {
    const started = performance.now()
    if (await call('status', `${baseUrl}/cloud-backups/status`, { method: 'GET', headers })) {
      record(started)
    } else {
      await pause()
    }
  }
}

async function backUp(token: string, index: number) {
  const auth = { authorization: `Bearer ${token}` }
  const json = { ...auth, 'content-type': 'application/json' }
  while (Date.now() < measureUntil) {
    const file = randomBytes(uploadBytes)
    const sha256 = createHash('sha256').update(file).digest('hex')
    const started = performance.now()
    const body = JSON.stringify({
      filename: `bench-${Date.now()}.zip`,
      backendId: `bench-relay-${index}`,
      uncompressedSize: file.length * 2,
      compressedSize: file.length,
      sha256,
    })
    const granted = await call('request-upload', `${baseUrl}/cloud-backups/request-upload`, {
      method: 'POST',
      headers: json,
      body,
    })
    if (!granted) {
      await pause()
      continue
    }
    const grant = JSON.parse(granted.text) as {
      backupId: string
      uploadUrl: string
      uploadHeaders: Record<string, string>
    }
    const put = await call('put', grant.uploadUrl, {
      method: 'PUT',
      headers: { ...grant.uploadHeaders, 'content-length': String(file.length) },
      body: file,
    })
    if (!put) {
      await pause()
      continue
    }
    const completed = await call('complete-upload', `${baseUrl}/cloud-backups/complete-upload`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ backupId: grant.backupId, actualCompressedSize: file.length }),
    })
    if (!completed) {
      await pause()
      continue
    }
    record(started)
    // Not part of the cycle's time: keeps each user far below the 500-backup quota however long the run.
    await call('delete', `${baseUrl}/cloud-backups/${grant.backupId}`, { method: 'DELETE', headers: auth })
  }
}

await Promise.all(tokens.map((token, index) => (work === 'status' ? pollStatus(token) : backUp(token, index))))
agent.destroy()
const result: UserLoadResult = {
  operationsPerSecond: operations / durationSeconds,
  operations,
  requests,
  p50Ms: latencyMicros.count > 0 ? latencyMicros.percentile(50) / 1000 : Number.NaN,
  p99Ms: latencyMicros.count > 0 ? latencyMicros.percentile(99) / 1000 : Number.NaN,
  failures,
  connectionErrors,
  failureSamples,
  firstFailureAt,
  lastFailureAt,
}
parentPort?.postMessage(result)
