import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { isBenchmark, loadSettings } from './lib/benchmark.ts'
import {
  checkRows,
  describeCommit,
  describeMachine,
  keptBelow,
  parseMarkdown,
  type Report,
  renderMarkdown,
  renderTable,
  type Section,
  toRow,
} from './lib/report.ts'

// A hung benchmark (a server that never closes) must not keep the run alive forever.
const benchmarkTimeoutMs = 15 * 60 * 1000

const benchDir = import.meta.dirname
const markdownFile = path.join(benchDir, 'report.md')
const jsonFile = path.join(benchDir, 'report.json')
const settings = loadSettings(process.env)
// BENCH_ONLY=auth,health runs those files and keeps the other sections of the last report.
const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim())
const files = readdirSync(benchDir)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => !only || only.includes(file.replace('.bench.ts', '')))
  .sort()

const ran: Section[] = []
for (const file of files) {
  // Before the import: the commit of the code this file is about to load.
  const commit = describeCommit(benchDir)
  const loaded: unknown = await import(pathToFileURL(path.join(benchDir, file)).href)
  const benchmark = (loaded as { benchmark?: unknown }).benchmark
  if (!isBenchmark(benchmark)) {
    throw new Error(`${file} must export \`benchmark\` with a name and a run function`)
  }
  console.error(`> ${benchmark.name} (${file}, ${commit})`)
  const date = new Date().toISOString()
  const watchdog = setTimeout(() => {
    console.error(`${file} ran longer than ${benchmarkTimeoutMs / 60_000} minutes; giving up`)
    process.exit(1)
  }, benchmarkTimeoutMs)
  const figures = await benchmark.run(settings)
  clearTimeout(watchdog)
  const run = { commit, date, machine: describeMachine(), settings }
  ran.push({ benchmark: benchmark.name, run, rows: figures.map(toRow) })
}

const names = new Set(ran.map((section) => section.benchmark))
const kept = only ? previousSections().filter((section) => !names.has(section.benchmark)) : []
const sections = [...kept, ...ran].sort((a, b) => a.benchmark.localeCompare(b.benchmark))
checkRows(sections)
const report: Report = { sections }
// Read now, not at the start: someone may have added to the hand-written part during the run.
const markdown = renderMarkdown(report, existsSync(markdownFile) ? keptBelow(readFileSync(markdownFile, 'utf8')) : '')
if (!isDeepStrictEqual(parseMarkdown(markdown), sections)) {
  throw new Error('report.md would not read back as the rows it was written from; nothing written')
}
writeFileSync(markdownFile, markdown)
writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`)
for (const { benchmark, run, rows } of ran) {
  console.log(`\n${benchmark} (${run.commit})\n${renderTable(rows)}`)
}
console.log(`\nWrote ${markdownFile} and report.json`)

/** The last report's sections: report.json (git-ignored), else what report.md holds. */
function previousSections(): Section[] {
  if (existsSync(jsonFile)) {
    const previous = JSON.parse(readFileSync(jsonFile, 'utf8')) as Partial<Report>
    // A report.json of the older, single-table form has no sections; report.md may have them.
    if (Array.isArray(previous.sections)) {
      return previous.sections
    }
  }
  return existsSync(markdownFile) ? parseMarkdown(readFileSync(markdownFile, 'utf8')) : []
}
