// Runs one cloud backup as the relay's backup service does it, in a process of its own so its peak RSS
// and event-loop delay are the backup's alone: createBackupArchive, then (given a cloud) request-upload,
// the relay's streamed uploadFile to the presigned URL, and complete-upload. Compiled to plain
// JavaScript by `compileArchiveChild` and run with plain Node, as the relay runs in production.
// Arguments: the compiled archive module, a JSON of its options, and optionally the compiled transfer
// module and a JSON of the cloud to upload to.
import { readFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { UploadGrant } from '@relay/contracts'
import type * as Archive from '../../apps/relay/src/backups/archive/index.ts'
import type * as Transfer from '../../apps/relay/src/backups/transfer.ts'

/** Where the child uploads: the cloud's base URL, a user's access token and the relay's backend id. */
export type ArchiveChildCloud = { cloudUrl: string; token: string; backendId: string }

export type ArchiveChildResult = {
  /** From the start of the snapshot to the confirmed upload (or the finished archive without a cloud). */
  wallMs: number
  /** Each step's share of `wallMs`, in order: archive, then request-upload, upload, complete-upload. */
  steps: Record<string, number>
  file: string
  size: number
  sha256: string
  uncompressedSize: number
  /** The cloud's id of the completed backup, when uploaded. */
  backupId?: string
  /** RSS once the modules are loaded, before the backup. */
  baselineRssMb: number
  /** The process's maximum resident set size since it started (VmHWM). */
  peakRssMb: number
  maxEventLoopDelayMs: number
  /** The longest event-loop delay within each step. */
  stepDelaysMs: Record<string, number>
}

const [modulePath, optionsJson, transferPath, cloudJson] = process.argv.slice(2)
if (!modulePath || !optionsJson || (transferPath && !cloudJson)) {
  throw new Error('usage: archive-child <archive module> <options json> [<transfer module> <cloud json>]')
}
const archive = (await import(modulePath)) as typeof Archive
const transfer = transferPath ? ((await import(transferPath)) as typeof Transfer) : undefined
const cloud = cloudJson ? (JSON.parse(cloudJson) as ArchiveChildCloud) : undefined
const options = JSON.parse(optionsJson) as Omit<Archive.CreateBackupArchiveOptions, 'createdAt'> & { createdAt: string }
if (cloud) {
  // The relay calls the cloud with fetch all day long: load it (undici) before the clock starts.
  await fetch('data:,')
}
const baselineRssMb = process.memoryUsage.rss() / 1024 / 1024
const delay = monitorEventLoopDelay({ resolution: 5 })
delay.enable()
const steps: Record<string, number> = {}
const stepDelaysMs: Record<string, number> = {}
const started = performance.now()
let stepStarted = started
const stepDone = (name: string) => {
  const now = performance.now()
  steps[name] = now - stepStarted
  stepStarted = now
  stepDelaysMs[name] = delay.max / 1e6
  delay.reset()
}

const result = await archive.createBackupArchive({ ...options, createdAt: new Date(options.createdAt) })
stepDone('snapshot and zip')
let backupId: string | undefined
if (cloud && transfer) {
  const grant = await callCloud<UploadGrant>(cloud, '/cloud-backups/request-upload', {
    filename: result.filename,
    backendId: cloud.backendId,
    uncompressedSize: result.uncompressedSize,
    compressedSize: result.size,
    sha256: result.sha256,
  })
  stepDone('request-upload')
  await transfer.uploadFile(grant.uploadUrl, grant.uploadHeaders, result.file, result.size, () => {})
  stepDone('upload')
  await callCloud(cloud, '/cloud-backups/complete-upload', {
    backupId: grant.backupId,
    actualCompressedSize: result.size,
  })
  stepDone('complete-upload')
  backupId = grant.backupId
}
const wallMs = performance.now() - started
delay.disable()
const output: ArchiveChildResult = {
  wallMs,
  steps,
  file: result.file,
  size: result.size,
  sha256: result.sha256,
  uncompressedSize: result.uncompressedSize,
  backupId,
  baselineRssMb,
  peakRssMb: peakRss(),
  maxEventLoopDelayMs: Math.max(...Object.values(stepDelaysMs)),
  stepDelaysMs,
}
process.stdout.write(`${JSON.stringify(output)}\n`)

/**
 * The high-water mark of this program's resident set, in MB. Not getrusage's maxRSS: a child forked
 * from a large parent (the bench, with the cloud and PGlite in it) starts with the parent's pages
 * mapped, and Linux carries that peak over the exec into maxRSS. VmHWM belongs to the exec'd program.
 */
function peakRss(): number {
  const status = readFileSync('/proc/self/status', 'utf8')
  const kilobytes = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]
  if (!kilobytes) {
    throw new Error('no VmHWM in /proc/self/status: the archive bench measures peak RSS on Linux only')
  }
  return Number(kilobytes) / 1024
}

/** A POST with a JSON body as the relay's cloud API client sends it (apps/relay/src/cloud-client/cloud-api.ts). */
async function callCloud<T>(target: ArchiveChildCloud, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${target.cloudUrl}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${target.token}`,
      accept: 'application/json',
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  })
  const reply: unknown = await response.json().catch(() => undefined)
  if (!response.ok) {
    throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(reply)}`)
  }
  return reply as T
}
