import type { SensorSeries } from '@relay/contracts'
import styles from './Health.module.css'
import { sparklineShape, sparklineSummary } from './sparkline'

const width = 96
const height = 24

/** A sensor's recent values as a small line; its name, lowest, highest and latest value are its text. */
export function Sparkline({ series, name, period }: { series: SensorSeries; name: string; period: string }) {
  const shape = sparklineShape(series.points, width, height)
  const label = `${name}, ${period}: ${sparklineSummary(series.points, series.unit)}`
  return (
    <svg
      className={styles.sparkline}
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={label}
      data-testid="sparkline"
    >
      <title>{label}</title>
      <path d={shape.path} className={styles.sparklinePath} />
      {shape.last && <circle cx={shape.last.x} cy={shape.last.y} r={2} className={styles.sparklineDot} />}
    </svg>
  )
}
