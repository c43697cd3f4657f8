// Preloaded into a process under measurement (node --import): tracks its event-loop delay and, on
// SIGUSR2, writes the longest delay, the peak RSS and the CPU time (every thread) since the previous signal to LOOP_PROBE_FILE, then
// starts over. The bench reads the file after each signal.
import { writeFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const file = process.env.LOOP_PROBE_FILE
if (file) {
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  let peakRss = process.memoryUsage.rss()
  let cpu = process.cpuUsage()
  setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss())
  }, 20).unref()
  process.on('SIGUSR2', () => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss())
    const used = process.cpuUsage(cpu)
    writeFileSync(
      file,
      JSON.stringify({
        maxDelayMs: delay.max / 1e6,
        peakRssMb: peakRss / 1024 / 1024,
        cpuSeconds: (used.user + used.system) / 1e6,
      }),
    )
    cpu = process.cpuUsage()
    delay.reset()
    peakRss = process.memoryUsage.rss()
  })
}
