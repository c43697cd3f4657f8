import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { unifiedAuthRoutes } from '@relay/contracts'
import { createHttpBrowser, freePort, submitForm } from '../../packages/testkit/src/http-browser.ts'

const repoRoot = path.resolve(import.meta.dirname, '../..')
const relayManifest = JSON.parse(readFileSync(path.join(repoRoot, 'apps/relay/package.json'), 'utf8')) as {
  nodeFlags: string[]
}

/** What the relay's probe saw since the previous reading. */
export type RelayProbe = { maxDelayMs: number; peakRssMb: number; cpuSeconds: number }

/** One backup through the relay's API: its wall time from the request to `done`, and what the relay logged. */
export type RelayBackup = {
  wallMs: number
  /** Milliseconds in each stage, from the relay's `backup uploaded` log line. */
  stageMs: Record<string, number>
  backupId: string
  bytes: number
}

export type RelayProcess = {
  url: string
  /** POST /api/cloud-backups/create, then the operation polled every 20 ms until it is done. */
  backup(): Promise<RelayBackup>
  /** A JSON request to the relay's API that must succeed. */
  call(method: string, urlPath: string, body?: unknown): Promise<unknown>
  probe(): Promise<RelayProbe>
  close(): Promise<void>
}

/**
 * The relay as users run it: its compiled dist/ (built here first) on plain Node in a process of its
 * own, over `dataDir`, talking to the cloud at `cloudUrl`, set up in mode none. Its event-loop delay and
 * RSS are read through a preloaded probe (loop-probe.mjs).
 */
export async function startRelayProcess(dataDir: string, cloudUrl: string): Promise<RelayProcess> {
  const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc')
  execFileSync(process.execPath, [tsc, '-b', 'apps/relay/tsconfig.build.json'], { cwd: repoRoot, stdio: 'inherit' })
  const port = await freePort()
  const probeFile = path.join(dataDir, '..', `loop-probe-${port}.json`)
  const child: ChildProcess = spawn(
    process.execPath,
    [
      // The flags `npm start` runs the relay with (scripts/start.mjs).
      ...relayManifest.nodeFlags,
      '--import',
      path.join(import.meta.dirname, 'loop-probe.mjs'),
      path.join(repoRoot, 'apps/relay/dist/main.js'),
    ],
    {
      cwd: repoRoot,
      env: {
        ...process.env,
        RELAY_DATA_DIR: dataDir,
        RELAY_PORT: String(port),
        CLOUD_URL: cloudUrl,
        // Info: the stage times of each backup are read from its `backup uploaded` line.
        LOG_LEVEL: 'info',
        LOOP_PROBE_FILE: probeFile,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  const uploaded: { backupId: string; bytes: number; stageMs: Record<string, number> }[] = []
  createInterface({ input: child.stdout as Readable }).on('line', (line) => {
    let entry: { msg?: string; level?: number }
    try {
      entry = JSON.parse(line) as typeof entry
    } catch {
      console.error(`  relay: ${line}`)
      return
    }
    if (entry.msg === 'backup uploaded') {
      uploaded.push(entry as unknown as (typeof uploaded)[number])
    } else if ((entry.level ?? 0) >= 40) {
      console.error(`  relay: ${line}`)
    }
  })
  const url = `http://127.0.0.1:${port}`
  await untilAnswering(`${url}/api/health`, child)
  const setup = await fetch(`${url}${unifiedAuthRoutes.setMode.url}`, {
    method: unifiedAuthRoutes.setMode.method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode: 'none' }),
  })
  if (!setup.ok) {
    throw new Error(`relay setup answered ${setup.status}`)
  }
  async function call(method: string, urlPath: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${url}${urlPath}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const reply: unknown = await response.json()
    if (!response.ok) {
      throw new Error(`${method} ${urlPath} answered ${response.status}: ${JSON.stringify(reply)}`)
    }
    return reply
  }

  return {
    url,
    call,
    async backup() {
      const logged = uploaded.length
      const started = performance.now()
      const { operationId } = (await call('POST', '/api/cloud-backups/create')) as { operationId: string }
      for (;;) {
        const operation = (await call('GET', `/api/cloud-backups/operations/${operationId}`)) as {
          stage: string
          error: string | null
        }
        if (operation.stage === 'done') {
          break
        }
        if (operation.stage === 'failed') {
          throw new Error(`the relay's backup failed: ${operation.error}`)
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      const wallMs = performance.now() - started
      for (let wait = 0; uploaded.length === logged && wait < 100; wait++) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      const line = uploaded[logged]
      if (!line) {
        throw new Error('the relay did not log its backup')
      }
      return { wallMs, stageMs: line.stageMs, backupId: line.backupId, bytes: line.bytes }
    },
    async probe() {
      child.kill('SIGUSR2')
      for (let attempt = 0; attempt < 100; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 10))
        try {
          const reading = JSON.parse(readFileSync(probeFile, 'utf8')) as RelayProbe
          rmSync(probeFile)
          return reading
        } catch {
          // Not written yet.
        }
      }
      throw new Error('the relay did not answer the loop probe')
    },
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM')
        await once(child, 'exit')
      }
    },
  }
}

async function untilAnswering(url: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) {
      throw new Error(`the relay exited with ${child.exitCode}`)
    }
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    )
    if (ok) {
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not answer within 30 s`)
}

/** Signs the relay in to the cloud as a browser would: the relay's redirect, the cloud's sign-in form, back. */
export async function signInRelay(relayUrl: string, cloudUrl: string, email: string, password: string): Promise<void> {
  const browser = createHttpBrowser()
  const start = await browser.request(`${relayUrl}/api/unified-auth/cloud/login`)
  const atPage = await browser.follow(new URL(start.headers.get('location') ?? ''))
  await atPage.response.text()
  const login = await submitForm(browser, new URL(`${atPage.url.pathname}/login`, cloudUrl), { email, password })
  const back = await browser.follow(
    new URL(login.headers.get('location') ?? '', cloudUrl),
    (next) => next.origin === cloudUrl,
  )
  const callback = await browser.request(back.url)
  if (callback.status !== 302) {
    throw new Error(`the relay's sign-in callback answered ${callback.status}`)
  }
}
