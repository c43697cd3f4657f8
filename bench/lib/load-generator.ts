// Worker-thread entry started by measureThroughput: runs autocannon and posts one LoadResult.
// Inside a worker autocannon skips aggregating its histograms (it expects to be one of its own
// workers), so responses and latencies are counted here from its 'response' events.
import { createHistogram } from 'node:perf_hooks'
import { parentPort, workerData } from 'node:worker_threads'
import autocannon from 'autocannon'
import type { LoadRequest, LoadResult, RequestSpec } from './throughput.ts'

type OnResponse = (client: autocannon.Client, statusCode: number, resBytes: number, responseTime: number) => void

function load(request: RequestSpec, connections: number, duration: number, onResponse?: OnResponse) {
  // autocannon spreads these over its defaults, so an undefined field would erase a default.
  const { url, method = 'GET', headers = {}, body } = request
  const options: autocannon.Options = {
    url,
    method,
    headers,
    connections,
    duration,
    ...(body === undefined ? {} : { body }),
  }
  return new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (err: unknown, result: autocannon.Result) => {
      if (err) {
        reject(err)
      } else {
        resolve(result)
      }
    })
    if (onResponse) {
      instance.on('response', onResponse)
    }
  })
}

const { request, settings } = workerData as LoadRequest
await load(request, settings.connections, settings.warmupSeconds)
const latencyMicros = createHistogram()
let responses = 0
const result = await load(
  request,
  settings.connections,
  settings.durationSeconds,
  (_client, statusCode, _bytes, ms) => {
    if (statusCode >= 200 && statusCode < 300) {
      responses++
      latencyMicros.record(Math.max(1, Math.round(ms * 1000)))
    }
  },
)
const report: LoadResult = {
  requestsPerSecond: responses / result.duration,
  p50Ms: latencyMicros.count > 0 ? latencyMicros.percentile(50) / 1000 : Number.NaN,
  p99Ms: latencyMicros.count > 0 ? latencyMicros.percentile(99) / 1000 : Number.NaN,
  errors: result.errors,
  non2xx: result.non2xx,
}
parentPort?.postMessage(report)
