const units = [
  { label: 'd', seconds: 86_400 },
  { label: 'h', seconds: 3_600 },
  { label: 'min', seconds: 60 },
  { label: 's', seconds: 1 },
] as const

/** The two most significant units, e.g. "2 h 5 min", "3 d", "42 s". */
export function formatUptime(totalSeconds: number): string {
  const seconds = Math.max(0, Math.floor(totalSeconds))
  const counts = units.map((unit, i) => {
    const larger = units[i - 1]
    return Math.floor((larger ? seconds % larger.seconds : seconds) / unit.seconds)
  })
  const first = counts.findIndex((count) => count > 0)
  if (first === -1) {
    return '0 s'
  }
  return units
    .slice(first, first + 2)
    .map((unit, i) => ({ unit, count: counts[first + i] ?? 0 }))
    .filter(({ count }) => count > 0)
    .map(({ unit, count }) => `${count} ${unit.label}`)
    .join(' ')
}
