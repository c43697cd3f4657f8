import { endpoint } from './endpoint.js'

export const healthUrls = {
  cloud: endpoint('GET', '/healthz'),
  /** Its 503 is an error body that also names each dependency's state. */
  cloudReadiness: endpoint('GET', '/readyz'),
  /** Its 503 is the full report, with the failing database check in it. */
  relay: endpoint('GET', '/api/health', { dataStatuses: [503] }),
}
