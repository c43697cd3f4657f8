import { endpoint } from './endpoint.js'
import { MINUTE, SECOND } from './time.js'

/** Fixed health thresholds of the dashboard. Comparisons are strict (greater than). */
export const healthThresholds = {
  ERROR_NO_DATA_MINUTES: 5,
  WARNING_NO_DATA_SECONDS: 30,
  SENSOR_ERROR_LOST_THRESHOLD: 5,
  SENSOR_WARNING_LOST_THRESHOLD: 1,
} as const

export const streamSilence = {
  error: healthThresholds.ERROR_NO_DATA_MINUTES * MINUTE,
  warning: healthThresholds.WARNING_NO_DATA_SECONDS * SECOND,
} as const

export const healthSeverities = ['success', 'warning', 'error'] as const
export type HealthSeverity = (typeof healthSeverities)[number]

export const healthAreas = ['Collectors', 'Streams', 'Sensors', 'Junctions'] as const
export type HealthArea = (typeof healthAreas)[number]

export const collectorTypes = ['Host', 'GenericAPI', 'MQTT', 'Virtual', 'EventEngine'] as const
export type CollectorType = (typeof collectorTypes)[number]
/** Internal collectors that every statistic leaves out. */
export const excludedCollectorType = 'EventEngine' satisfies CollectorType

export const streamTypes = ['HTTP', 'MQTT', 'COM', 'WebSocket', 'Virtual'] as const
export type StreamType = (typeof streamTypes)[number]

export const dashboardPolling = {
  interval: 5 * SECOND,
  expandedStorageKey: 'dashboard_overview_expanded',
} as const

export const dashboardUrls = {
  collectorStats: endpoint('GET', '/api/collectors/stats'),
  streamStats: endpoint('GET', '/api/connections/streams/stats'),
}
