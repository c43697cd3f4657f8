import { type ChildProcess, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { closeSync, openSync, readFileSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '@relay/testkit'
import pg from 'pg'

/** Milliseconds since the fleet's clock started: every fault, error and probe is stamped with it. */
export type Stamp = number

export function createTimeline() {
  const start = performance.now()
  return { now: (): Stamp => Math.round(performance.now() - start) }
}
export type Timeline = ReturnType<typeof createTimeline>

// --- cloud processes ---------------------------------------------------------------------------

const cloudRoot = fileURLToPath(new URL('..', import.meta.url))

export type CloudProcess = {
  name: string
  port: number
  url: string
  logFile: string
  /** The process id, to read its memory from /proc. */
  pid: number | undefined
  /** Set once the process exited, with its code or signal. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
  exited: Promise<void>
  kill(signal: NodeJS.Signals): Promise<void>
  /** The last lines of its log, for failure messages. */
  tail(lines?: number): string
}

/**
 * `node src/main.ts` as its own process, as production runs it: its own pool, timers and Redis client,
 * so a crash is a real crash. Output goes to `logFile` (appended, so a restart keeps the earlier lines).
 */
export function startCloudProcess(options: {
  name: string
  port: number
  logFile: string
  env: Record<string, string>
  /** The script to run instead of `src/main.ts` (absolute, or relative to apps/cloud), e.g. a benchmark's launcher. */
  entry?: string
}): CloudProcess {
  const out = openSync(options.logFile, 'a')
  // Only what the fleet sets: no payment secret, external store or database leaks in from this environment.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(CLOUD_|S3_|STRIPE_|DATABASE_URL$|REDIS_URL$)/.test(key)),
  )
  const entry = options.entry ?? 'src/main.ts'
  const child: ChildProcess = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', entry], {
    cwd: cloudRoot,
    env: { ...inherited, CLOUD_HOST: '127.0.0.1', CLOUD_PORT: String(options.port), ...options.env },
    stdio: ['ignore', out, out],
  })
  closeSync(out)
  const instance: CloudProcess = {
    name: options.name,
    port: options.port,
    url: `http://127.0.0.1:${options.port}`,
    logFile: options.logFile,
    pid: child.pid,
    exit: undefined,
    exited: new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        instance.exit = { code, signal }
        resolve()
      })
    }),
    async kill(signal) {
      if (instance.exit === undefined) {
        child.kill(signal)
        await instance.exited
      }
    },
    tail(lines = 30) {
      try {
        return readFileSync(options.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
      } catch {
        return ''
      }
    },
  }
  return instance
}

/** Resolves once `url` answers 200; throws after `timeoutMs` or as soon as the process exits. */
export async function waitUntilServing(instance: CloudProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (instance.exit) {
      throw new Error(`${instance.name} exited (${JSON.stringify(instance.exit)}):\n${instance.tail()}`)
    }
    const status = await fetch(`${instance.url}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
      (reply) => reply.status,
      () => 0,
    )
    if (status === 200) {
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`${instance.name} did not serve /healthz within ${timeoutMs} ms:\n${instance.tail()}`)
}

// --- readiness probes ------------------------------------------------------------------------

export type Probe = { at: Stamp; status: number; body: string }

/**
 * Polls `/readyz` of one instance, as a load balancer does, and keeps every answer (status 0: no
 * answer within the timeout or no connection).
 */
export function probeReadiness(url: string, timeline: Timeline, everyMs = 250) {
  const probes: Probe[] = []
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const at = timeline.now()
      const probe = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) }).then(
        async (reply) => ({ at, status: reply.status, body: (await reply.text()).slice(0, 300) }),
        (err: Error) => ({ at, status: 0, body: err.message }),
      )
      probes.push(probe)
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  return {
    probes,
    /** Whether the last answer said ready. */
    ready: () => probes.at(-1)?.status === 200,
    async stop() {
      stopped = true
      await loop
    },
  }
}
export type ReadinessProbe = ReturnType<typeof probeReadiness>

// --- load balancer ---------------------------------------------------------------------------

export type Backend = { name: string; port: number; readiness: ReadinessProbe }

/** One request through the balancer: which instance took it and how it ended (status 0: no answer). */
export type Routed = { at: Stamp; backend: string; method: string; path: string; status: number; error?: string }

/** The header naming the instance that answered. */
export const BACKEND_HEADER = 'x-fleet-instance'

/**
 * A small round-robin HTTP load balancer, the public address of the fleet. Like a production one it
 * routes to instances whose `/readyz` said 200 and, when none did, to every instance it can still
 * connect to (rather than to nobody). Its port is chosen by the caller: the instances must know the
 * public URL before it listens. The Host header is passed through, so presigned URLs signed for
 * the public address verify on whichever instance takes them.
 */
export async function startBalancer(timeline: Timeline, backends: Backend[], port: number) {
  const refused = new Set<string>()
  const routed: Routed[] = []
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  let next = 0

  function pick(): Backend | undefined {
    const reachable = backends.filter((b) => !refused.has(b.name))
    const ready = reachable.filter((b) => b.readiness.ready())
    const pool = ready.length > 0 ? ready : reachable.length > 0 ? reachable : backends
    next = (next + 1) % Number.MAX_SAFE_INTEGER
    return pool[next % pool.length]
  }

  const server = http.createServer((request, response) => {
    const backend = pick()
    const at = timeline.now()
    const method = request.method ?? 'GET'
    const url = request.url ?? '/'
    const record = (status: number, error?: string) =>
      routed.push({ at, backend: backend?.name ?? 'none', method, path: url.split('?')[0] ?? url, status, error })
    if (!backend) {
      record(502, 'no backend')
      response.writeHead(502).end()
      return
    }
    const upstream = http.request(
      { host: '127.0.0.1', port: backend.port, method, path: url, headers: request.headers, agent },
      (reply) => {
        refused.delete(backend.name)
        record(reply.statusCode ?? 0)
        response.writeHead(reply.statusCode ?? 502, { ...reply.headers, [BACKEND_HEADER]: backend.name })
        reply.pipe(response)
        reply.on('error', () => response.destroy())
      },
    )
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      // A refused connection takes the instance out until its readiness probe answers again.
      if (err.code === 'ECONNREFUSED') {
        refused.add(backend.name)
      }
      record(0, err.code ?? err.message)
      if (!response.headersSent) {
        response.writeHead(502, { [BACKEND_HEADER]: backend.name }).end()
      } else {
        response.destroy()
      }
    })
    request.pipe(upstream)
  })
  // Longer than any pause of a relay: the balancer never closes an idle connection that a client
  // may be about to reuse (that race resets the request, and would read as a fault of the fleet).
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 70_000
  // Readiness answering again puts a refused instance back.
  const readmit = setInterval(() => {
    for (const backend of backends) {
      if (backend.readiness.probes.at(-1)?.status !== 0) {
        refused.delete(backend.name)
      }
    }
  }, 250)
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    routed,
    backends,
    async close() {
      clearInterval(readmit)
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      agent.destroy()
    },
  }
}
export type Balancer = Awaited<ReturnType<typeof startBalancer>>

// --- Redis that can go away ------------------------------------------------------------------

/** A TCP forwarder small enough to pass to `node -e`: listens on argv[1], forwards to argv[2]:argv[3]. */
const forwarderSource = `
const net = require('node:net')
const [listenPort, host, port] = process.argv.slice(1)
const server = net.createServer((client) => {
  const upstream = net.connect(Number(port), host)
  const drop = () => { client.destroy(); upstream.destroy() }
  client.on('error', drop)
  upstream.on('error', drop)
  client.pipe(upstream).pipe(client)
})
server.listen(Number(listenPort), '127.0.0.1', () => process.stdout.write('listening\\n'))
`

/**
 * Redis behind a forwarder on a port of its own, in a process of its own so that the test's load never
 * delays its bytes. `cut()` kills the forwarder: connections drop and the port refuses, as when Redis
 * dies. `restore()` listens on the same port again.
 */
export async function startRedisGate(target: { host: string; port: number }) {
  const port = await freePort()
  let forwarder: ChildProcess | undefined

  async function restore() {
    const child = spawn(process.execPath, ['-e', forwarderSource, String(port), target.host, String(target.port)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    forwarder = child
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the Redis forwarder exited with ${code}`)))
      child.stdout?.once('data', () => resolve())
    })
  }

  async function cut() {
    const child = forwarder
    forwarder = undefined
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }
  }

  await restore()
  return { url: `redis://127.0.0.1:${port}`, cut, restore, close: cut }
}

// --- PostgreSQL ------------------------------------------------------------------------------

/** Terminates every backend connected to `database` (the fleet's pools): what a failover or an operator does. */
export async function terminateConnections(adminUrl: string, database: string): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const result = await client.query<{ terminated: boolean }>(
      'select pg_terminate_backend(pid) as terminated from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [database],
    )
    return result.rows.filter((row) => row.terminated).length
  } finally {
    await client.end()
  }
}

// --- simulated relays ------------------------------------------------------------------------

/** One request a relay made: `status` 0 means no answer (connection error or timeout). */
export type Outcome = {
  at: Stamp
  relay: number
  step: string
  status: number
  backend: string | undefined
  code?: string
  error?: string
}

export type RelayOptions = {
  index: number
  token: string
  baseUrl: string
  timeline: Timeline
  outcomes: Outcome[]
  /** Stops the loop after the cycle in progress. */
  stopped: () => boolean
  /** A source of randomness of its own, so one seed replays a run's choices. */
  random: () => number
}

const REQUEST_TIMEOUT_MS = 10_000

/**
 * A relay backing up in a loop: status, request-upload, PUT, complete-upload, list, sometimes delete.
 * Some cycles stop after request-upload (a relay killed mid-upload) and some report a wrong size (a
 * rejected upload), so the run leaves pending and failed records behind for the checks.
 */
export async function runRelay({ index, token, baseUrl, timeline, outcomes, stopped, random }: RelayOptions) {
  const backendId = `fleet-relay-${index}`
  const auth = { authorization: `Bearer ${token}` }

  async function call(step: string, url: string, init: RequestInit = {}): Promise<{ ok: boolean; body: unknown }> {
    const at = timeline.now()
    try {
      const reply = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
      const text = await reply.text()
      const body = parseJson(text)
      const code = (body as { code?: unknown } | undefined)?.code
      outcomes.push({
        at,
        relay: index,
        step,
        status: reply.status,
        backend: reply.headers.get(BACKEND_HEADER) ?? undefined,
        code: typeof code === 'string' ? code : undefined,
        error: reply.ok ? undefined : text.slice(0, 300),
      })
      return { ok: reply.ok, body }
    } catch (err) {
      outcomes.push({ at, relay: index, step, status: 0, backend: undefined, error: describe(err) })
      return { ok: false, body: undefined }
    }
  }

  const json = (body: unknown): RequestInit => ({
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

  while (!stopped()) {
    const cycleStart = Date.now()
    await cycle()
    // About one upload every 6 s per relay: under the backup rate limit (10 requests a minute).
    const restUntil = cycleStart + 6000 + random() * 2000
    while (Date.now() < restUntil && !stopped()) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(250, restUntil - Date.now())))
    }
  }

  async function cycle() {
    if (!(await call('status', `${baseUrl}/cloud-backups/status`, { headers: auth })).ok) {
      return
    }
    const file = randomBytes(512 + Math.floor(random() * 4096))
    const sha256 = createHash('sha256').update(file).digest('hex')
    const grant = await call(
      'request-upload',
      `${baseUrl}/cloud-backups/request-upload`,
      json({
        filename: `backup-${Date.now()}.zip`,
        backendId,
        uncompressedSize: file.length * 2,
        compressedSize: file.length,
        sha256,
      }),
    )
    if (!grant.ok) {
      return
    }
    const { backupId, uploadUrl, uploadHeaders } = grant.body as {
      backupId: string
      uploadUrl: string
      uploadHeaders: Record<string, string>
    }
    const roll = random()
    if (roll < 0.1) {
      return // killed before its upload: the record stays pending until released
    }
    const put = await call('put', uploadUrl, { method: 'PUT', headers: uploadHeaders, body: file })
    if (!put.ok) {
      return
    }
    // A truncated or corrupted upload as the relay sees it: the cloud must refuse it and drop the file.
    const reported = roll < 0.2 ? file.length - 1 : file.length
    const completed = await call(
      roll < 0.2 ? 'complete-wrong-size' : 'complete-upload',
      `${baseUrl}/cloud-backups/complete-upload`,
      json({ backupId, actualCompressedSize: reported }),
    )
    if (!completed.ok && roll >= 0.2) {
      return
    }
    const list = await call('list', `${baseUrl}/cloud-backups/list?limit=20`, { headers: auth })
    if (list.ok && random() < 0.3) {
      const backups = (list.body as { backups: { id: string; status: string }[] }).backups
      const oldest = backups.filter((b) => b.status === 'completed').at(-1)
      if (oldest) {
        await call('delete', `${baseUrl}/cloud-backups/${oldest.id}`, { method: 'DELETE', headers: auth })
      }
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function describe(err: unknown): string {
  const error = err as Error & { cause?: { code?: string; message?: string } }
  return [error.name, error.message, error.cause?.code ?? error.cause?.message].filter(Boolean).join(': ')
}

// --- the embedded store's folder -------------------------------------------------------------

/** Where the embedded store keeps the object of `key` (files are named by the SHA-256 of their key). */
export function objectFile(dataDir: string, bucket: string, key: string): string {
  const name = createHash('sha256').update(key).digest('hex')
  return path.join(dataDir, 'objects', bucket, name.slice(0, 2), name)
}
