/** How long and how hard every measurement runs; the same for every benchmark in a run. */
export type BenchSettings = Readonly<{
  durationSeconds: number
  warmupSeconds: number
  connections: number
}>

/**
 * What our figure is read against. A **peer** does the same work another way (restic, zip, the same relay
 * with its junctions stopped, the same route without the guard): the ratio compares like with like. A
 * **ceiling** does less than ours (a bare Fastify route answering a constant, a bare PUT server): no
 * real endpoint reaches it, and the ratio says how much of the framework's upper bound is left. **none**:
 * nothing was measured beside ours; the name says what to read it against (a budget).
 */
export type Reference = { kind: 'peer' | 'ceiling' | 'none'; name: string }

/** One row of the report: our figure beside its reference's, measured in the same run. */
export type Figure = {
  figure: string
  ours: number
  /** The reference's figure from the same run; null when `comparedWith.kind` is `none`. */
  reference: number | null
  comparedWith: Reference
  unit: string
  /** Highest resident set size of the whole bench process while this figure was measured. */
  peakRssMb: number
  /** What the figure needs to be read; `toRow` puts "<kind>: <reference name>; " in front. */
  notes: string
}

/** The reference every HTTP figure of ours meets when it is measured beside a bare route. */
export const bareRoute = { kind: 'ceiling', name: 'bare Fastify route' } as const satisfies Reference

/** What a `*.bench.ts` file exports as `benchmark`. */
export type Benchmark = {
  name: string
  run(settings: BenchSettings): Promise<Figure[]>
}

export function loadSettings(env: Record<string, string | undefined>): BenchSettings {
  const raw = env.BENCH_DURATION ?? '5'
  const durationSeconds = Number(raw)
  if (!Number.isFinite(durationSeconds) || durationSeconds < 1 || durationSeconds > 600) {
    throw new Error(`BENCH_DURATION must be a number of seconds from 1 to 600, got "${raw}"`)
  }
  return Object.freeze({ durationSeconds, warmupSeconds: 1, connections: 10 })
}

export function isBenchmark(value: unknown): value is Benchmark {
  if (typeof value !== 'object' || value === null) {
    return false
  }
  const candidate = value as Partial<Benchmark>
  return typeof candidate.name === 'string' && typeof candidate.run === 'function'
}
