import { useQuery, useQueryClient } from '@tanstack/react-query'
import { ApiError, api } from '../api'

export const authStatusKey = ['auth-status'] as const

/**
 * Who the browser is to the relay. Each read makes the relay call the cloud, so it is not polled:
 * it is read on load and window focus, and again after a sign-in action or any 401.
 */
export function useAuthStatus() {
  return useQuery({
    queryKey: authStatusKey,
    queryFn: ({ signal }) => api.authStatus(signal),
    staleTime: 30_000,
  })
}

/** The relay no longer accepts this browser's session (signed out elsewhere, expired, mode changed). */
export function isSignedOutError(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401 && error.code === 'UNAUTHORIZED'
}

/** Reads the status again; resolves once the new one is in, so a pending button stays pending until then. */
export function useRefreshAuthStatus() {
  const queryClient = useQueryClient()
  return () => queryClient.invalidateQueries({ queryKey: authStatusKey })
}
