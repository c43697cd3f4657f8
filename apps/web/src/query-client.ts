import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query'
import { authStatusKey, isSignedOutError } from './auth/use-auth-status'

const maxRetries = 3

/** The app's query client: any 401 sends the browser back to the sign-in screen by reading the status again. */
export function createQueryClient(): QueryClient {
  const onError = (error: unknown) => {
    if (isSignedOutError(error)) {
      void queryClient.invalidateQueries({ queryKey: authStatusKey })
    }
  }
  const queryClient = new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: {
      queries: {
        // Asking again does not bring a session back.
        retry: (failureCount, error) => !isSignedOutError(error) && failureCount < maxRetries,
      },
    },
  })
  return queryClient
}
