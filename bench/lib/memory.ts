export type MemorySampler = {
  /** Stops sampling and returns the highest RSS seen, in MB. */
  stop(): number
}

/** Samples the resident set size of this process every `intervalMs` until stopped. */
export function startMemorySampler(intervalMs = 100): MemorySampler {
  // memoryUsage.rss() is the same figure as memoryUsage().rss without walking the V8 heap.
  let peak = process.memoryUsage.rss()
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage.rss())
  }
  const timer = setInterval(sample, intervalMs)
  return {
    stop() {
      clearInterval(timer)
      sample()
      return peak / 1024 / 1024
    },
  }
}
