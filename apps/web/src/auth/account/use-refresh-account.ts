import { useQueryClient } from '@tanstack/react-query'
import { useRefreshAuthStatus } from '../use-auth-status'

/** Where the cloud sign-in comes back to from the Account page. */
export const accountPath = '/settings/account'
export const cloudSessionsKey = ['cloud-sessions'] as const

/** Reads the status and the cloud sessions again after an action changed them. */
export function useRefreshAccount() {
  const queryClient = useQueryClient()
  const refreshStatus = useRefreshAuthStatus()
  return () => Promise.all([refreshStatus(), queryClient.invalidateQueries({ queryKey: cloudSessionsKey })])
}
