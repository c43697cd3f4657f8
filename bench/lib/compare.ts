import type { BenchSettings, Figure, Reference } from './benchmark.ts'
import { startMemorySampler } from './memory.ts'
import { formatValue } from './report.ts'
import { measureThroughput, median, type RequestSpec, type Throughput } from './throughput.ts'

/** Rounds per comparison; each round measures the reference and ours once, so each gets `rounds` samples. */
const rounds = 3

export type Comparison = {
  /** Names the progress lines on stderr. */
  label: string
  /** The report rows this comparison fills: req/s and p99, and the median latency when named. */
  figures: { throughput: string; latency: string; medianLatency?: string }
  ours: string | RequestSpec
  /** What ours is measured beside: a peer doing the same work, or a ceiling such as a bare route. */
  reference: string | RequestSpec
  comparedWith: Reference & { kind: 'peer' | 'ceiling' }
}

/**
 * The reference and ours alternate within one process, in the order reference-ours, ours-reference…,
 * so drift (CPU heat, GC of earlier runs, other load on the machine) falls on both sides; each side
 * reports its median round. Both servers must already listen; peak RSS covers the rounds only.
 */
export async function compareWithReference(comparison: Comparison, settings: BenchSettings): Promise<Figure[]> {
  const { label, figures, comparedWith } = comparison
  const sampler = startMemorySampler()
  const runs = { ours: [] as Throughput[], reference: [] as Throughput[] }
  let peakRssMb = 0
  try {
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['reference', 'ours'] as const) : (['ours', 'reference'] as const)
      for (const side of order) {
        const result = await measureThroughput(comparison[side], settings)
        runs[side].push(result)
        const latency = `p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms`
        const summary = `${Math.round(result.requestsPerSecond)} req/s, ${latency}`
        const name = side === 'ours' ? 'ours' : comparedWith.kind
        console.error(`  ${label} round ${round + 1}/${rounds} ${name}: ${summary}`)
      }
    }
  } finally {
    peakRssMb = sampler.stop()
  }
  const rps = (side: Throughput[]) => side.map((run) => run.requestsPerSecond)
  const p50 = (side: Throughput[]) => side.map((run) => run.p50Ms)
  const p99 = (side: Throughput[]) => side.map((run) => run.p99Ms)
  const errors = [...runs.ours, ...runs.reference].reduce((sum, run) => sum + run.errors, 0)
  const errorNote = errors > 0 ? `; ${errors} connection errors` : ''
  const spread = (values: (side: Throughput[]) => number[]) =>
    `ours ${range(values(runs.ours))}, ${comparedWith.kind} ${range(values(runs.reference))}`
  const row = (figure: string, unit: string, values: (side: Throughput[]) => number[], notes: string): Figure => {
    const ours = median(values(runs.ours))
    const reference = median(values(runs.reference))
    // Work on top of a bare route cannot beat it: when it seems to, the run's noise is larger than the gap.
    const beaten = unit === 'req/s' ? ours > reference : ours < reference
    const noise =
      comparedWith.kind === 'ceiling' && beaten
        ? '; ours past the ceiling in this run: the noise of the machine exceeds the gap'
        : ''
    return { figure, ours, reference, comparedWith, unit, peakRssMb, notes: `${notes}${noise}` }
  }
  const latencyRow = (figure: string, label: string, values: (side: Throughput[]) => number[]) =>
    row(figure, 'ms', values, `median of ${rounds} rounds' ${label} (${spread(values)})`)
  return [
    row(figures.throughput, 'req/s', rps, `median of ${rounds} alternating rounds (${spread(rps)})${errorNote}`),
    ...(figures.medianLatency === undefined ? [] : [latencyRow(figures.medianLatency, 'p50', p50)]),
    latencyRow(figures.latency, 'p99', p99),
  ]
}

/**
 * "min–max" of the samples, the spread the notes give: printed as the report prints a figure unless
 * `decimals` is given, so a median printed in its row reads as lying within it.
 */
export function range(values: number[], decimals?: number): string {
  const print = (value: number) => (decimals === undefined ? formatValue(value) : value.toFixed(decimals))
  return `${print(Math.min(...values))}–${print(Math.max(...values))}`
}

/**
 * `values` rounded to `decimals` so that the rounded parts add up to the rounded sum (largest
 * remainder): a note listing steps and their total then adds up as printed.
 */
export function roundedParts(values: number[], decimals: number): string[] {
  const unit = 10 ** decimals
  const scaled = values.map((value) => value * unit)
  const floors = scaled.map(Math.floor)
  let missing = Math.round(scaled.reduce((sum, value) => sum + value, 0)) - floors.reduce((sum, v) => sum + v, 0)
  const byRemainder = scaled.map((value, index) => ({ index, remainder: value - Math.floor(value) }))
  byRemainder.sort((a, b) => b.remainder - a.remainder)
  for (const { index } of byRemainder) {
    if (missing <= 0) {
      break
    }
    floors[index] = (floors[index] as number) + 1
    missing--
  }
  return floors.map((value) => (value / unit).toFixed(decimals))
}
