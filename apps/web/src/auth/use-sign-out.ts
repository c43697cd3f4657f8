import { useMutation } from '@tanstack/react-query'
import { toast } from 'sonner'
import { api } from '../api'
import { useRefreshAuthStatus } from './use-auth-status'

/** Ends this browser's session; the status read afterwards takes the browser to the sign-in screen. */
export function useSignOut() {
  const refreshStatus = useRefreshAuthStatus()
  return useMutation({
    mutationFn: () => api.signOut(),
    onSuccess: () => refreshStatus(),
    onError: (error) => {
      toast.error('Could not sign out', { description: error.message })
    },
  })
}
