import { endpoint } from './endpoint.js'
import { sourceHealthLimits } from './sources.plain.js'
import { DAY } from './time.js'

/**
 * The health history of collectors and streams: per item and minute, how many polls or sends worked
 * and failed, their latency and the last error; per sensor and minute, its values; and every change
 * of state. Kept for `sourceHealthLimits.historyRetentionDays`.
 */
export const healthHistoryLimits = {
  /** Most buckets one history reply covers, found or not: a day of minutes. */
  maxBuckets: 1440,
  /** A bucket spans whole minutes, from one minute to the longest retention. */
  bucketMinutes: { min: 1, max: sourceHealthLimits.historyRetentionDays.max * 24 * 60 },
  /** The range a history query covers when it names no `from`. */
  defaultRange: DAY,
  events: { defaultLimit: 50, maxLimit: 500 },
  /** A bucket keeps this much of its last error, an event of its reason. */
  textMaxLength: 200,
  /**
   * Sensor values are kept per slot of this many minutes (144 a day): enough for a day's sparkline, and
   * a tenth of the rows a minute each would cost, since sensors outnumber collectors.
   */
  sensorSlotMinutes: 10,
  /**
   * Numeric sensors of one collector whose values are kept, the first ones seen: each costs some 8 kB
   * a day, so a collector of 1 000 sensors stays small.
   */
  sensorsPerCollector: 20,
} as const

/** What has a history: `collector:<id>` or `stream:<id>`, as the health board names them. */
export const healthItemPattern =
  '^(collector|stream):[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'

export const healthHistoryUrls = {
  history: endpoint('GET', '/api/health/history'),
  events: endpoint('GET', '/api/health/events'),
}
