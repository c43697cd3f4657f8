import { dashboardPolling } from '@relay/contracts'
import { type UseQueryResult, useQuery } from '@tanstack/react-query'
import { useEffect } from 'react'
import { api } from '../api'
import { sourceKeys } from '../sources/queries'
import type { OverviewData } from './overview'

// Polling is the retry: a failed fetch marks its area unknown at once, and the next poll tries again.
const polling = { refetchInterval: dashboardPolling.interval, retry: false } as const

/** The dashboard's three polled sources; collector and stream statistics are fetched in parallel. */
export function useOverview(): OverviewData & { updatedAt: number } {
  const collectors = useQuery({
    queryKey: [...sourceKeys.stats, 'collectors'],
    queryFn: ({ signal }) => api.collectorStats(signal),
    ...polling,
  })
  const streams = useQuery({
    queryKey: [...sourceKeys.stats, 'streams'],
    queryFn: ({ signal }) => api.streamStats(signal),
    ...polling,
  })
  const junctions = useQuery({
    queryKey: sourceKeys.junctions,
    queryFn: ({ signal }) => api.junctions(signal),
    ...polling,
  })

  useLoggedFailure('collector statistics', collectors)
  useLoggedFailure('stream statistics', streams)
  useLoggedFailure('junctions', junctions)

  return {
    collectors: current(collectors),
    streams: current(streams),
    junctions: current(junctions),
    updatedAt: Math.max(collectors.dataUpdatedAt, streams.dataUpdatedAt, junctions.dataUpdatedAt),
  }
}

/** The data, unless the last fetch failed: old numbers would pass for the current state. */
function current<T>(query: UseQueryResult<T>): T | undefined {
  return query.isError ? undefined : query.data
}

/** The dashboard shows no error to the user (the spec's rule); the console keeps the reason. */
function useLoggedFailure(what: string, query: UseQueryResult<unknown>) {
  const { error } = query
  useEffect(() => {
    if (error) {
      console.error(`Dashboard: could not fetch ${what}`, error)
    }
  }, [error, what])
}
