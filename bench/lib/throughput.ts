import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import type { BenchSettings } from './benchmark.ts'

export type Throughput = {
  /** 2xx responses per second of the measured duration. */
  requestsPerSecond: number
  /** Median latency; from a microsecond histogram, like p99. */
  p50Ms: number
  /** From a microsecond histogram: autocannon's own latency histogram holds whole milliseconds only. */
  p99Ms: number
  /** Connection errors, timeouts included. */
  errors: number
}

/** What every request of one measurement sends; a bare URL string means a GET. */
export type RequestSpec = {
  url: string
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  headers?: Record<string, string>
  body?: string
}

export type LoadRequest = { request: RequestSpec; settings: BenchSettings }
export type LoadResult = Throughput & { non2xx: number }

/** Slack beyond warm-up plus duration before a silent load generator counts as hung. */
const deadlineSlackSeconds = 30

// On Node 20 a worker does not apply the `--import tsx` hooks to its own entry file
// (privatenumber/tsx#354), so a small script registers tsx first and then imports the entry.
const loadGeneratorBootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
  .then(({ register }) => { register(); return import(${JSON.stringify(import.meta.resolve('./load-generator.ts'))}) })`

/**
 * Sends `target` for a discarded warm-up, then for the measured duration. autocannon runs in a worker
 * thread so it does not share the event loop of the servers it measures. Refuses anything but 127.0.0.1.
 */
export async function measureThroughput(target: string | RequestSpec, settings: BenchSettings): Promise<Throughput> {
  const request: RequestSpec = typeof target === 'string' ? { url: target } : target
  const { url } = request
  if (new URL(url).hostname !== '127.0.0.1') {
    throw new Error(`benchmarks only target 127.0.0.1, not ${url}`)
  }
  const deadlineMs = (settings.warmupSeconds + settings.durationSeconds + deadlineSlackSeconds) * 1000
  const workerData: LoadRequest = { request, settings }
  const worker = new Worker(loadGeneratorBootstrap, { eval: true, workerData })
  try {
    const [result] = (await once(worker, 'message', { signal: AbortSignal.timeout(deadlineMs) })) as [LoadResult]
    if (result.non2xx > 0) {
      throw new Error(
        `${request.method ?? 'GET'} ${url} answered ${result.non2xx} non-2xx responses; the benchmark would measure an error path`,
      )
    }
    const { requestsPerSecond, p50Ms, p99Ms, errors } = result
    return { requestsPerSecond, p50Ms, p99Ms, errors }
  } finally {
    await worker.terminate()
  }
}

export function median(values: number[]): number {
  if (values.length === 0) {
    throw new Error('median of no values')
  }
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}
