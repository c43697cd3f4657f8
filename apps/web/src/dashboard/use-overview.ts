import { dashboardPolling } from '@relay/contracts'
import { type UseQueryResult, useQuery } from '@tanstack/react-query'
import { useEffect, useRef } from 'react'
import { api } from '../api'
import { sourceKeys } from '../sources/queries'
import { junctionFingerprint, type OverviewData } from './overview'

// Polling is the retry: a failed fetch marks its area unknown at once, and the next poll tries again.
const polling = { refetchInterval: dashboardPolling.interval, retry: false } as const

/**
 * The dashboard's data: collector and stream statistics polled in parallel, and the junction list
 * the app already holds (shared with the Sources page), fetched again only when the statistics show
 * that what junctions drive has changed, rather than on a poll of its own.
 */
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
    staleTime: Number.POSITIVE_INFINITY,
    retry: false,
  })
  useRefetchOnChange(junctionFingerprint({ collectors: collectors.data, streams: streams.data }), junctions.refetch)

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

/** Calls `refetch` whenever `fingerprint` changes from one known value to another. */
function useRefetchOnChange(fingerprint: string | undefined, refetch: () => unknown) {
  const last = useRef(fingerprint)
  useEffect(() => {
    if (fingerprint === undefined) {
      return
    }
    if (last.current !== undefined && last.current !== fingerprint) {
      void refetch()
    }
    last.current = fingerprint
  }, [fingerprint, refetch])
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
