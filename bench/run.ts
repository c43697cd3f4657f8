import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { isBenchmark, loadSettings } from './lib/benchmark.ts'
import { describeMachine, type Report, type Row, renderMarkdown, renderTable, toRow } from './lib/report.ts'

// A hung benchmark (a server that never closes) must not keep the run alive forever.
const benchmarkTimeoutMs = 15 * 60 * 1000

const benchDir = import.meta.dirname
const settings = loadSettings(process.env)
// BENCH_ONLY=auth,health runs those files and keeps the other rows of the last report.
const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim())
const files = readdirSync(benchDir)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => !only || only.includes(file.replace('.bench.ts', '')))
  .sort()

const results: Row[] = []
for (const file of files) {
  const loaded: unknown = await import(pathToFileURL(path.join(benchDir, file)).href)
  const benchmark = (loaded as { benchmark?: unknown }).benchmark
  if (!isBenchmark(benchmark)) {
    throw new Error(`${file} must export \`benchmark\` with a name and a run function`)
  }
  console.error(`> ${benchmark.name} (${file})`)
  const watchdog = setTimeout(() => {
    console.error(`${file} ran longer than ${benchmarkTimeoutMs / 60_000} minutes; giving up`)
    process.exit(1)
  }, benchmarkTimeoutMs)
  const figures = await benchmark.run(settings)
  clearTimeout(watchdog)
  results.push(...figures.map((figure) => toRow(benchmark.name, figure)))
}

const previousFile = path.join(benchDir, 'report.json')
if (only && existsSync(previousFile)) {
  const previous = JSON.parse(readFileSync(previousFile, 'utf8')) as Report
  const ran = new Set(results.map((row) => row.benchmark))
  results.unshift(...previous.results.filter((row) => !ran.has(row.benchmark)))
}
const report: Report = { machine: describeMachine(), settings, results }
writeFileSync(path.join(benchDir, 'report.md'), renderMarkdown(report))
writeFileSync(path.join(benchDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`)
console.log(renderTable(results))
console.log(`\nWrote ${path.join(benchDir, 'report.md')} and report.json`)
