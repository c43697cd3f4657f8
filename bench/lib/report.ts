import { execFileSync } from 'node:child_process'
import os from 'node:os'
import type { BenchSettings, Figure, Reference } from './benchmark.ts'

/**
 * A figure as the report prints it: `ours` and `reference` rounded as printed, the ratio computed from
 * those printed values (so a reader recomputing it gets the same), the reference named in the notes.
 */
export type Row = Figure & { ratio: number | null }

export type Machine = {
  node: string
  os: string
  cpu: string
  cores: number
  totalMemoryGb: number
}

/** When, where and on which code one benchmark file ran. */
export type RunInfo = {
  /** Short hash of HEAD, with " + changes" when the working tree differed from it. */
  commit: string
  date: string
  machine: Machine
  settings: BenchSettings
}

export type Section = { benchmark: string; run: RunInfo; rows: Row[] }

export type Report = { sections: Section[] }

/** Ends the generated part of report.md; whatever follows it is written by hand and kept by every run. */
export const endOfGenerated = '<!-- end of the generated report: anything below this line is kept as written -->'

export function toRow(figure: Figure): Row {
  const { comparedWith } = figure
  if (/[;|\n]/.test(comparedWith.name)) {
    throw new Error(`a reference name cannot hold ";", "|" or a line break: ${comparedWith.name}`)
  }
  const reference = figure.reference === null ? null : printed(figure.reference)
  const ours = printed(figure.ours)
  const notes = `${comparedWith.kind}: ${comparedWith.name}${figure.notes ? `; ${figure.notes}` : ''}`
  return {
    ...figure,
    ours,
    reference,
    peakRssMb: round(figure.peakRssMb, 1),
    notes: notes.replace(/\s*\n\s*/g, ' '),
    ratio: ratioOf(ours, reference),
  }
}

/** ours / reference, 2 decimals, or 2 significant digits below 0.1 (0.0027 rather than 0.00). */
function ratioOf(ours: number, reference: number | null): number | null {
  return reference === null || reference <= 0 ? null : Number(formatRatio(ours / reference))
}

/**
 * Throws unless every row reads true: a reference exactly when something was measured beside ours, a
 * positive one, and a ratio equal to the printed ours / printed reference.
 */
export function checkRows(sections: Section[]): void {
  const problems: string[] = []
  for (const { benchmark, rows } of sections) {
    for (const row of rows) {
      const where = `${benchmark}: ${row.figure}`
      if ((row.comparedWith.kind === 'none') !== (row.reference === null)) {
        problems.push(`${where}: compared with ${row.comparedWith.kind} but reference ${row.reference}`)
      } else if (row.reference !== null && row.reference <= 0) {
        problems.push(`${where}: the ${row.comparedWith.kind} measured ${row.reference}`)
      } else if (row.ratio !== ratioOf(row.ours, row.reference)) {
        problems.push(
          `${where}: ratio ${row.ratio}, but ${row.ours} / ${row.reference} = ${ratioOf(row.ours, row.reference)}`,
        )
      }
    }
  }
  if (problems.length > 0) {
    throw new Error(`the report does not add up:\n${problems.join('\n')}`)
  }
}

export function describeMachine(): Machine {
  return {
    node: process.version,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    totalMemoryGb: round(os.totalmem() / 1024 ** 3, 1),
  }
}

/** The code a benchmark measures: HEAD's short hash, and " + changes" when the working tree is dirty. */
export function describeCommit(cwd: string): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: 'pipe' }).trim()
  try {
    const head = git('rev-parse', '--short', 'HEAD')
    return git('status', '--porcelain') === '' ? head : `${head} + changes`
  } catch {
    return 'unknown (not a git checkout)'
  }
}

const header = ['figure', 'compared with', 'ours', 'reference', 'ratio', 'unit', 'peak RSS MB', 'notes']

export function renderTable(rows: Row[]): string {
  const lines = rows.map((row) => [
    row.figure,
    row.comparedWith.kind,
    formatValue(row.ours),
    row.reference === null ? '–' : formatValue(row.reference),
    row.ratio === null ? '–' : formatRatio(row.ratio),
    row.unit,
    row.peakRssMb.toFixed(1),
    row.notes,
  ])
  return [header, header.map(() => '---'), ...lines]
    .map((cells) => `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`)
    .join('\n')
}

export function renderMarkdown({ sections }: Report, keptBelow = ''): string {
  const rendered = sections.map(({ benchmark, run, rows }) => {
    const { machine, settings } = run
    return `## ${benchmark}

Measured on commit \`${run.commit}\`, ${run.date.replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC')}; Node ${machine.node}, ${machine.os}, ${machine.cpu}, ${machine.cores} cores, ${machine.totalMemoryGb} GB; ${settings.durationSeconds} s per measurement after ${settings.warmupSeconds} s of discarded warm-up, ${settings.connections} connections where autocannon loads.
<!-- run ${JSON.stringify(run)} -->

${renderTable(rows)}
`
  })
  return `# Benchmarks

Generated by \`npm run bench\`; see [README.md](README.md) for what each figure means and how it is measured.
Each section names the commit it was measured on ("+ changes": the working tree differed from it) and the machine.

- **compared with**: *peer*, a reference doing the same work another way (restic, \`zip\`, a \`sqlite3\` + \`curl\`
  pipeline, the same relay with its junctions stopped, the same route without the guard, a smaller deployment), so
  the ratio compares like with like; *ceiling*, a reference doing less than ours (a bare Fastify route answering a
  constant, a bare PUT server writing to disk), an upper bound no real endpoint reaches, so the ratio says how much
  of that bound is left, not how we fare against an alternative; *none*, nothing measured beside ours. The notes
  begin with the reference's name.
- **ratio**: ours / reference as printed (2 decimals; 2 significant digits below 0.1). Above 1 is better for rates
  (req/s, trips/s, cycles/s) and worse for everything else (latency, time, size, memory, CPU).
- **peak RSS MB**: the whole bench process (our app, the reference, the load generator's thread), sampled every
  100 ms while the figure was measured, unless the notes say whose it is.
- Raw figures move with whatever else the machine runs; ours and its reference alternate in the same run, so the
  ratio is the figure to read.

${rendered.join('\n')}
${endOfGenerated}
${keptBelow ? `\n${keptBelow}` : ''}`
}

/** The hand-written part after the generated report, kept by every run; also found after a report of the older, single-table form. */
export function keptBelow(markdown: string): string {
  const marker = markdown.indexOf(endOfGenerated)
  if (marker >= 0) {
    return markdown.slice(marker + endOfGenerated.length).replace(/^\n+/, '')
  }
  const machine = /^## Machine$/m.exec(markdown)
  if (!machine) {
    return ''
  }
  const after = markdown.slice(machine.index + machine[0].length)
  const next = /^#+ /m.exec(after)
  return next ? after.slice(next.index) : ''
}

/** Reads the sections back from report.md, for a run of some files when report.json is gone (it is not committed). */
export function parseMarkdown(markdown: string): Section[] {
  const generated = markdown.split(endOfGenerated)[0] ?? ''
  const sections: Section[] = []
  let benchmark: string | undefined
  let current: Section | undefined
  for (const line of generated.split('\n')) {
    const heading = /^## (.+)$/.exec(line)
    const run = /^<!-- run (.+) -->$/.exec(line)
    if (heading) {
      benchmark = heading[1]
      current = undefined
    } else if (run && benchmark !== undefined) {
      current = { benchmark, run: JSON.parse(run[1] as string) as RunInfo, rows: [] }
      sections.push(current)
    } else if (current && line.startsWith('| ')) {
      const cells = line
        .slice(2, -2)
        .split(' | ')
        .map((cell) => cell.replaceAll('\\|', '|'))
      if (cells[0] !== header[0] && cells[0] !== '---') {
        current.rows.push(parseRow(cells))
      }
    }
  }
  return sections
}

function parseRow(cells: string[]): Row {
  const [figure, kind, ours, reference, ratio, unit, peakRssMb, notes] = cells as [string, ...string[]]
  if (notes === undefined || !['peer', 'ceiling', 'none'].includes(kind as string)) {
    throw new Error(`report.md: cannot read the row "${cells.join(' | ')}"`)
  }
  const name = notes.slice(`${kind}: `.length).split('; ')[0] as string
  return {
    figure,
    ours: Number(ours),
    reference: reference === '–' ? null : Number(reference),
    comparedWith: { kind: kind as Reference['kind'], name },
    unit: unit as string,
    peakRssMb: Number(peakRssMb),
    notes,
    ratio: ratio === '–' ? null : Number(ratio),
  }
}

/** A figure as the report prints it: integers from 100 up, 2 decimals from 1, 3 significant digits below. */
export function formatValue(value: number): string {
  const size = Math.abs(value)
  if (size >= 100) {
    return Math.round(value).toString()
  }
  return size >= 1 || size === 0 ? value.toFixed(2) : Number(value.toPrecision(3)).toString()
}

function formatRatio(ratio: number): string {
  return ratio >= 0.1 ? ratio.toFixed(2) : Number(ratio.toPrecision(2)).toString()
}

/** The value as the report prints it. */
function printed(value: number): number {
  return Number(formatValue(value))
}

function round(value: number, decimals: number): number {
  const factor = 10 ** decimals
  return Math.round(value * factor) / factor
}
