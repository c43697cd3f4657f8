import os from 'node:os'
import type { CollectorDriver, Reading } from './types.js'

/** This machine: CPU use since the previous fetch, memory, load and uptime. */
export function hostCollector(): CollectorDriver {
  let previous = cpuTimes()
  return {
    async fetch() {
      const current = cpuTimes()
      const busy = current.busy - previous.busy
      const total = current.total - previous.total
      previous = current
      const readings: Reading[] = [
        { externalId: 'cpu.usage', name: 'CPU usage', unit: '%', value: total > 0 ? round((busy / total) * 100) : 0 },
        { externalId: 'cpu.cores', name: 'CPU cores', unit: null, value: os.cpus().length },
        {
          externalId: 'memory.used',
          name: 'Memory used',
          unit: '%',
          value: round((1 - os.freemem() / os.totalmem()) * 100),
        },
        { externalId: 'memory.free', name: 'Memory free', unit: 'MB', value: Math.round(os.freemem() / 1024 / 1024) },
        { externalId: 'uptime', name: 'Uptime', unit: 's', value: Math.round(os.uptime()) },
      ]
      os.loadavg().forEach((load, index) => {
        readings.push({
          externalId: `load.${[1, 5, 15][index]}`,
          name: `Load (${[1, 5, 15][index]} min)`,
          unit: null,
          value: round(load),
        })
      })
      return readings
    },
    async close() {},
  }
}

function cpuTimes() {
  let busy = 0
  let total = 0
  for (const cpu of os.cpus()) {
    const { user, nice, sys, irq, idle } = cpu.times
    busy += user + nice + sys + irq
    total += user + nice + sys + irq + idle
  }
  return { busy, total }
}

function round(value: number): number {
  return Math.round(value * 100) / 100
}
