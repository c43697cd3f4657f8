// Runs one createBackupArchive in a process of its own, so its peak RSS and event-loop delay are the
// archive's alone. Compiled to plain JavaScript by `compileArchiveChild` and run with plain Node, as
// the relay runs in production. Arguments: the compiled archive module and a JSON of its options.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type * as Archive from '../../apps/relay/src/backups/archive/index.ts'

export type ArchiveChildResult = {
  wallMs: number
  file: string
  size: number
  sha256: string
  uncompressedSize: number
  /** RSS once the module is loaded, before the backup. */
  baselineRssMb: number
  /** The process's maximum resident set size (getrusage). */
  peakRssMb: number
  maxEventLoopDelayMs: number
}

const [modulePath, optionsJson] = process.argv.slice(2)
if (!modulePath || !optionsJson) {
  throw new Error('usage: archive-child <archive module> <options json>')
}
const archive = (await import(modulePath)) as typeof Archive
const options = JSON.parse(optionsJson) as Omit<Archive.CreateBackupArchiveOptions, 'createdAt'> & { createdAt: string }
const baselineRssMb = process.memoryUsage.rss() / 1024 / 1024
const delay = monitorEventLoopDelay({ resolution: 5 })
delay.enable()
const started = performance.now()
const result = await archive.createBackupArchive({ ...options, createdAt: new Date(options.createdAt) })
const wallMs = performance.now() - started
delay.disable()
const output: ArchiveChildResult = {
  wallMs,
  file: result.file,
  size: result.size,
  sha256: result.sha256,
  uncompressedSize: result.uncompressedSize,
  baselineRssMb,
  peakRssMb: process.resourceUsage().maxRSS / 1024,
  maxEventLoopDelayMs: delay.max / 1e6,
}
process.stdout.write(`${JSON.stringify(output)}\n`)
