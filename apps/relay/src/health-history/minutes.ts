import { healthHistoryLimits, MINUTE } from '@relay/contracts'

/** Whole minutes since 1970: the key of every minute row. */
export const minuteOf = (at: Date | number): number => Math.floor((typeof at === 'number' ? at : at.getTime()) / MINUTE)

/** The first minute of the sensor slot `minute` falls in: sensor values are kept per slot. */
export const sensorSlotOf = (minute: number): number => minute - (minute % healthHistoryLimits.sensorSlotMinutes)

export const minuteStart = (minute: number): string => new Date(minute * MINUTE).toISOString()

/** Text kept in a row (an error, a reason): the start of it. */
export const shortened = (text: string | null): string | null =>
  text === null ? null : text.slice(0, healthHistoryLimits.textMaxLength)

/** One item's polls or sends in one minute. */
export type OutcomeMinute = {
  ok: number
  failed: number
  latencySumMs: number
  latencyMaxMs: number
  lastError: string | null
}

/** One sensor's numeric values in one minute. */
export type ValueMinute = { min: number; max: number; sum: number; count: number; last: number }

export function addOutcome(into: OutcomeMinute | undefined, ok: boolean, latencyMs: number, error: string | null) {
  const latency = Math.max(0, Math.round(latencyMs))
  if (into === undefined) {
    return { ok: ok ? 1 : 0, failed: ok ? 0 : 1, latencySumMs: latency, latencyMaxMs: latency, lastError: error }
  }
  into.ok += ok ? 1 : 0
  into.failed += ok ? 0 : 1
  into.latencySumMs += latency
  into.latencyMaxMs = Math.max(into.latencyMaxMs, latency)
  into.lastError = error ?? into.lastError
  return into
}

export function addValue(into: ValueMinute | undefined, value: number): ValueMinute {
  if (into === undefined) {
    return { min: value, max: value, sum: value, count: 1, last: value }
  }
  into.min = Math.min(into.min, value)
  into.max = Math.max(into.max, value)
  into.sum += value
  into.count += 1
  into.last = value
  return into
}

/** A sensor value that has a place on a chart: a finite number, or a boolean as 0 or 1. */
export function numericValue(value: unknown): number | undefined {
  if (typeof value === 'boolean') {
    return value ? 1 : 0
  }
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined
}
