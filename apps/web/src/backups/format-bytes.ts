import { MB } from '@relay/contracts'

const units = [
  { size: 1024 * MB, label: 'GB' },
  { size: MB, label: 'MB' },
  { size: 1024, label: 'kB' },
] as const

/** "812 B", "4.2 kB", "37 MB": binary units, as the cloud's quotas count them ("500MB" is 500 × 1024²). */
export function formatBytes(bytes: number): string {
  for (const unit of units) {
    if (bytes >= unit.size) {
      const value = bytes / unit.size
      return `${value < 10 ? value.toFixed(1).replace(/\.0$/, '') : Math.round(value)} ${unit.label}`
    }
  }
  return `${bytes} B`
}
