import type { SensorPoint } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { sparklineShape, sparklineSummary } from './sparkline'

const point = (minute: number, avg: number, extra: Partial<SensorPoint> = {}): SensorPoint => ({
  start: new Date(Date.UTC(2026, 0, 1, 10, minute)).toISOString(),
  min: avg,
  max: avg,
  avg,
  last: avg,
  ...extra,
})

describe('sparklineShape', () => {
  it('runs from the left edge to the right, the highest mean at the top', () => {
    const shape = sparklineShape([point(0, 10), point(10, 20), point(20, 15)], 100, 20, 2)
    expect(shape.path).toBe('M2 18 L50 2 L98 10')
    expect(shape.last).toEqual({ x: 98, y: 10 })
  })

  it('draws a flat series through the middle and a single point as a dot in the centre', () => {
    expect(sparklineShape([point(0, 5), point(10, 5)], 100, 20).path).toBe('M2 10 L98 10')
    expect(sparklineShape([point(0, 5)], 100, 20)).toEqual({ path: 'M50 10', last: { x: 50, y: 10 } })
  })

  it('has nothing to draw without points', () => {
    expect(sparklineShape([], 100, 20)).toEqual({ path: '', last: null })
  })
})

describe('sparklineSummary', () => {
  const format = (value: number) => String(value)

  it('names the lowest and highest values of any point and the latest value', () => {
    const points = [point(0, 20, { min: 19.5, max: 21 }), point(10, 22, { min: 21, max: 23, last: 22.5 })]
    expect(sparklineSummary(points, '°C', format)).toBe('min 19.5 °C, max 23 °C, last 22.5 °C')
  })

  it('leaves out a missing unit and says when there is nothing', () => {
    expect(sparklineSummary([point(0, 1)], null, format)).toBe('min 1, max 1, last 1')
    expect(sparklineSummary([], 'W', format)).toBe('No values recorded')
  })
})
