import { dashboardPolling } from '@relay/contracts'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api'
import { useRefreshSources } from '../sources/queries'

export const alertKeys = { silences: ['health', 'silences'] } as const

/** The silences in force, polled with the dashboard so a silence that ends on its own drops out. */
export function useSilences() {
  return useQuery({
    queryKey: alertKeys.silences,
    queryFn: ({ signal }) => api.silences(signal),
    refetchInterval: dashboardPolling.interval,
  })
}

/**
 * Acknowledging or silencing changes the marks every list and statistic carries, so each refreshes
 * once it is done, whether it worked or not. Failures stay with the control that caused them.
 */
export function useAlertChange<A>(action: (arg: A) => Promise<unknown>) {
  const refreshSources = useRefreshSources()
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: action,
    onSettled: () => Promise.all([refreshSources(), queryClient.invalidateQueries({ queryKey: alertKeys.silences })]),
  })
}
