import { useQuery } from '@tanstack/react-query'
import { api } from '../api'
import { heartbeatRange } from './heartbeat'

/** Minute buckets fill as polls happen; a refresh every 10 s keeps the current minute close to live. */
const heartbeatRefreshMs = 10_000
const eventsRefreshMs = 10_000

export const healthKeys = {
  history: (item: string) => ['health', 'history', item],
  events: (item: string | undefined) => ['health', 'events', item ?? 'all'],
} as const

/**
 * The last hour of an item (`collector:<id>`, `stream:<id>`) in minute buckets, with the range asked
 * for, and a collector's sensor values in the relay's 10-minute slots: the heartbeat bar and the
 * sensor sparklines share this one request.
 */
export function useHeartbeat(item: string) {
  return useQuery({
    queryKey: healthKeys.history(item),
    queryFn: async ({ signal }) => {
      const { from, to } = heartbeatRange(new Date())
      const reply = await api.healthHistory({ item, from, to, bucket: 1 }, signal)
      return { from, buckets: reply.buckets, sensors: reply.sensors }
    },
    refetchInterval: heartbeatRefreshMs,
  })
}

/** The newest changes of state, of one item or of all. */
export function useHealthEvents(item: string | undefined) {
  return useQuery({
    queryKey: healthKeys.events(item),
    queryFn: ({ signal }) => api.healthEvents({ item, limit: 50 }, signal),
    refetchInterval: eventsRefreshMs,
  })
}
