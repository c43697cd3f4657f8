import type { SensorPoint } from '@relay/contracts'

export type SparklineShape = {
  /** An SVG path through each point's mean, in a box of `width` by `height`; empty without points. */
  path: string
  /** Where the last point sits, to mark it with a dot. */
  last: { x: number; y: number } | null
}

/**
 * The line of a sensor's points, left to right in time order, scaled so its lowest mean touches the
 * bottom and its highest the top; a flat series runs through the middle. A margin keeps the stroke
 * and the dot inside the box.
 */
export function sparklineShape(
  points: readonly SensorPoint[],
  width: number,
  height: number,
  margin = 2,
): SparklineShape {
  if (points.length === 0) {
    return { path: '', last: null }
  }
  const values = points.map((point) => point.avg)
  const low = Math.min(...values)
  const high = Math.max(...values)
  const innerWidth = width - 2 * margin
  const innerHeight = height - 2 * margin
  const xOf = (index: number) => (points.length === 1 ? width / 2 : margin + (index / (points.length - 1)) * innerWidth)
  const yOf = (value: number) => (high === low ? height / 2 : margin + ((high - value) / (high - low)) * innerHeight)
  const coordinates = values.map((value, index) => ({ x: round(xOf(index)), y: round(yOf(value)) }))
  const path = coordinates.map(({ x, y }, index) => `${index === 0 ? 'M' : 'L'}${x} ${y}`).join(' ')
  return { path, last: coordinates.at(-1) ?? null }
}

const round = (value: number) => Math.round(value * 10) / 10

const number = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 })

/**
 * The sparkline in words, for screen readers and as its tooltip: the lowest and highest value over
 * the points, and the latest one ("min 20.5 °C, max 22 °C, last 21.5 °C").
 */
export function sparklineSummary(
  points: readonly SensorPoint[],
  unit: string | null,
  format: (value: number) => string = (value) => number.format(value),
): string {
  const lastPoint = points.at(-1)
  if (!lastPoint) {
    return 'No values recorded'
  }
  const withUnit = (value: number) => (unit ? `${format(value)} ${unit}` : format(value))
  const min = Math.min(...points.map((point) => point.min))
  const max = Math.max(...points.map((point) => point.max))
  return `min ${withUnit(min)}, max ${withUnit(max)}, last ${withUnit(lastPoint.last)}`
}
