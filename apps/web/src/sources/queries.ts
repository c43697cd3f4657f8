import { useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api'

/** How often the Sources page refreshes its lists, so running state and last-sent times stay current. */
const refreshMs = 5000

export const sourceKeys = {
  collectors: ['collectors'],
  sensors: (collectorId: string) => ['collectors', collectorId, 'sensors'],
  streams: ['streams'],
  junctions: ['junctions'],
  /** The dashboard statistics are computed from all three, so every change refreshes them too. */
  stats: ['dashboard'],
} as const

export function useCollectors() {
  return useQuery({
    queryKey: sourceKeys.collectors,
    queryFn: ({ signal }) => api.collectors(signal),
    refetchInterval: refreshMs,
  })
}

export function useStreams() {
  return useQuery({
    queryKey: sourceKeys.streams,
    queryFn: ({ signal }) => api.streams(signal),
    refetchInterval: refreshMs,
  })
}

export function useJunctions() {
  return useQuery({
    queryKey: sourceKeys.junctions,
    queryFn: ({ signal }) => api.junctions(signal),
    refetchInterval: refreshMs,
  })
}

export function useSensors(collectorId: string) {
  return useQuery({
    queryKey: sourceKeys.sensors(collectorId),
    queryFn: ({ signal }) => api.sensors(collectorId, signal),
    refetchInterval: refreshMs,
  })
}

/**
 * Refreshes everything a change to sources can affect. A junction start also starts its
 * collectors and streams, so one change refreshes every list rather than guessing which.
 */
export function useRefreshSources() {
  const queryClient = useQueryClient()
  return () =>
    Promise.all(
      [sourceKeys.collectors, sourceKeys.streams, sourceKeys.junctions, sourceKeys.stats].map((queryKey) =>
        queryClient.invalidateQueries({ queryKey }),
      ),
    )
}
