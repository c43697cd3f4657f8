import { backupVerificationEndpoints as endpoints, type VerificationSettings } from '@relay/contracts'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { call } from '../api'
import { backupKeys } from './queries'

/** Under the page's keys: a finished backup, restore or verification refreshes it with the list. */
export const verificationKey = [...backupKeys.all, 'verification']

/** Starts verifying one backup; its progress is followed like a backup's or a restore's. */
export function startVerification(backupId: string) {
  return call(endpoints.verify, { params: { backupId } })
}

/** How often backups are verified, the last check and the next. Read from the relay alone, never the cloud. */
export function useVerificationOverview() {
  return useQuery({ queryKey: verificationKey, queryFn: ({ signal }) => call(endpoints.overview, { signal }) })
}

export function useSaveVerificationSettings() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (settings: VerificationSettings) => call(endpoints.saveSettings, { body: settings }),
    onSuccess: (overview) => queryClient.setQueryData(verificationKey, overview),
  })
}
