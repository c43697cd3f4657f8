/** How long and how hard every measurement runs; the same for every benchmark in a run. */
export type BenchSettings = Readonly<{
  durationSeconds: number
  warmupSeconds: number
  connections: number
}>

/** One row of the report: our figure beside the peer's, measured in the same run. */
export type Figure = {
  figure: string
  ours: number
  peer: number
  unit: string
  /** Highest resident set size of the whole bench process while this figure was measured. */
  peakRssMb: number
  notes: string
}

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
