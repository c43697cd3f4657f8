import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { Worker } from 'node:worker_threads'

/** What simulated users do: poll `GET /cloud-backups/status`, or back up (request-upload, PUT, complete-upload). */
export type UserWork = 'status' | 'cycle'

export type UserLoadRequest = {
  baseUrl: string
  /** One access token per simulated user. */
  tokens: string[]
  work: UserWork
  warmupSeconds: number
  durationSeconds: number
  /** Size of each uploaded file (random bytes, so every SHA-256 differs). */
  uploadBytes: number
}

export type UserLoadResult = {
  /** Operations (status answers, or whole cycles) that ended inside the window, per second. */
  operationsPerSecond: number
  operations: number
  /** HTTP requests that ended inside the window, every step and failure included. */
  requests: number
  /** An operation's time: one status request, or request-upload through complete-upload. */
  p50Ms: number
  p99Ms: number
  /** Failed requests inside the window by HTTP status, or `connection` for no answer. */
  failures: Record<string, number>
  connectionErrors: number
  failureSamples: string[]
  /** Epoch ms of the first and last failure inside the window. */
  firstFailureAt: number | undefined
  lastFailureAt: number | undefined
}

const deadlineSlackSeconds = 30

// As in throughput.ts: on Node 20 a worker does not apply the `--import tsx` hooks to its own entry file.
const bootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
  .then(({ register }) => { register(); return import(${JSON.stringify(import.meta.resolve('./user-load.ts'))}) })`

/** Runs the users in a worker thread, so the load shares no event loop with a balancer in this process. */
export async function measureUsers(request: UserLoadRequest): Promise<UserLoadResult> {
  if (new URL(request.baseUrl).hostname !== '127.0.0.1') {
    throw new Error(`benchmarks only target 127.0.0.1, not ${request.baseUrl}`)
  }
  const deadlineMs = (request.warmupSeconds + request.durationSeconds + deadlineSlackSeconds) * 1000
  const worker = new Worker(bootstrap, { eval: true, workerData: request })
  try {
    const [result] = (await once(worker, 'message', { signal: AbortSignal.timeout(deadlineMs) })) as [UserLoadResult]
    return result
  } finally {
    await worker.terminate()
  }
}

/** Throws unless every request of the window succeeded: a figure must not measure an error path. */
export function expectNoFailures(label: string, result: UserLoadResult): void {
  const failed = Object.values(result.failures).reduce((sum, count) => sum + count, 0)
  if (failed > 0) {
    throw new Error(
      `${label}: ${failed} failed requests (${JSON.stringify(result.failures)}), e.g. ${result.failureSamples.join(' | ')}`,
    )
  }
}

export type ProcessMemorySampler = {
  /** Stops sampling and returns the highest summed RSS seen, in MB. */
  stop(): number
}

/** Samples the summed resident set size of other processes (VmRSS in /proc, Linux) every `intervalMs`. */
export function startProcessMemorySampler(pids: number[], intervalMs = 100): ProcessMemorySampler {
  const rssKb = (pid: number) => {
    try {
      const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
      return match ? Number(match[1]) : 0
    } catch {
      return 0 // exited
    }
  }
  let peakKb = 0
  const sample = () => {
    peakKb = Math.max(
      peakKb,
      pids.reduce((sum, pid) => sum + rssKb(pid), 0),
    )
  }
  sample()
  const timer = setInterval(sample, intervalMs)
  return {
    stop() {
      clearInterval(timer)
      sample()
      return peakKb / 1024
    },
  }
}
