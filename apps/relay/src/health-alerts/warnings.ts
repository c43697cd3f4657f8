import { AppError, type HealthIssue } from '@relay/contracts'
import type { SourcesRuntime } from '../sources/runtime.js'
import type { SourcesService } from '../sources/service.js'

/**
 * Whether an item has a warning now: it is failing or degraded, or a dashboard issue names it (a
 * failed fetch, a locked token, lost sensors, a silent stream).
 */
export function warningCheck({
  runtime,
  sources,
}: {
  runtime: () => Pick<SourcesRuntime, 'collectorHealth' | 'streamHealthOf'>
  sources: () => Pick<SourcesService, 'collectorStats' | 'streamStats'>
}) {
  return async (item: string): Promise<boolean> => {
    const id = item.slice(item.indexOf(':') + 1)
    const health = item.startsWith('collector:') ? runtime().collectorHealth(id) : runtime().streamHealthOf(id)
    if (health?.state === 'failing' || health?.state === 'degraded') {
      return true
    }
    const issues: HealthIssue[] = item.startsWith('collector:')
      ? await sources()
          .collectorStats()
          .then((stats) => [...stats.collectors.details, ...stats.sensors.details])
      : (await sources().streamStats()).details
    return issues.some((issue) => issue.item === item)
  }
}

/** Whether the collector, stream or junction an item names exists, asked of the sources service. */
export function itemLookup(sources: () => Pick<SourcesService, 'getCollector' | 'getStream' | 'getJunction'>) {
  return async (item: string): Promise<boolean> => {
    const id = item.slice(item.indexOf(':') + 1)
    const kind = item.slice(0, item.indexOf(':'))
    const service = sources()
    try {
      await (kind === 'collector'
        ? service.getCollector(id)
        : kind === 'stream'
          ? service.getStream(id)
          : service.getJunction(id))
      return true
    } catch (err) {
      if (err instanceof AppError && err.code === 'NOT_FOUND') {
        return false
      }
      throw err
    }
  }
}
