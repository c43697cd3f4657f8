import type { BenchSettings, Figure } from './benchmark.ts'
import { startMemorySampler } from './memory.ts'
import { measureThroughput, median, type RequestSpec, type Throughput } from './throughput.ts'

/** Rounds per comparison; each round measures the peer and ours once, so each gets `rounds` samples. */
const rounds = 3

export type Comparison = {
  /** Names the progress lines on stderr. */
  label: string
  /** The report rows this comparison fills: req/s and p99, and the median latency when named. */
  figures: { throughput: string; latency: string; medianLatency?: string }
  ours: string | RequestSpec
  peer: string | RequestSpec
  /** How the notes name the peer, e.g. `bare Fastify route`. */
  peerName: string
}

/**
 * Peer and ours alternate within one process, in the order peer-ours, ours-peer, peer-ours…,
 * so drift (CPU heat, GC of earlier runs) falls on both sides; each side reports its median round.
 * Both servers must already listen; peak RSS covers the rounds only.
 */
export async function compareWithPeer(comparison: Comparison, settings: BenchSettings): Promise<Figure[]> {
  const { label, figures, peerName } = comparison
  const sampler = startMemorySampler()
  const runs = { ours: [] as Throughput[], peer: [] as Throughput[] }
  let peakRssMb = 0
  try {
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['peer', 'ours'] as const) : (['ours', 'peer'] as const)
      for (const side of order) {
        const result = await measureThroughput(comparison[side], settings)
        runs[side].push(result)
        const latency = `p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms`
        const summary = `${Math.round(result.requestsPerSecond)} req/s, ${latency}`
        console.error(`  ${label} round ${round + 1}/${rounds} ${side}: ${summary}`)
      }
    }
  } finally {
    peakRssMb = sampler.stop()
  }
  const rps = (side: Throughput[]) => side.map((run) => run.requestsPerSecond)
  const p50 = (side: Throughput[]) => side.map((run) => run.p50Ms)
  const p99 = (side: Throughput[]) => side.map((run) => run.p99Ms)
  const errors = [...runs.ours, ...runs.peer].reduce((sum, run) => sum + run.errors, 0)
  const errorNote = errors > 0 ? `; ${errors} connection errors` : ''
  const spread = (values: (side: Throughput[]) => number[], decimals: number) =>
    `ours ${range(values(runs.ours), decimals)}, peer ${range(values(runs.peer), decimals)}`
  const latencyRow = (figure: string, label: string, values: (side: Throughput[]) => number[]): Figure => ({
    figure,
    ours: median(values(runs.ours)),
    peer: median(values(runs.peer)),
    unit: 'ms',
    peakRssMb,
    notes: `peer: ${peerName}; median of ${rounds} rounds' ${label} (${spread(values, 2)})`,
  })
  return [
    {
      figure: figures.throughput,
      ours: median(rps(runs.ours)),
      peer: median(rps(runs.peer)),
      unit: 'req/s',
      peakRssMb,
      notes: `peer: ${peerName}; median of ${rounds} alternating rounds (${spread(rps, 0)})${errorNote}`,
    },
    ...(figures.medianLatency === undefined ? [] : [latencyRow(figures.medianLatency, 'p50', p50)]),
    latencyRow(figures.latency, 'p99', p99),
  ]
}

function range(values: number[], decimals: number): string {
  return `${Math.min(...values).toFixed(decimals)}–${Math.max(...values).toFixed(decimals)}`
}
