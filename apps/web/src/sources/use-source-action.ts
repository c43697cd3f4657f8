import { useMutation } from '@tanstack/react-query'
import { toast } from 'sonner'
import { useRefreshSources } from './queries'

/** A row action (start, stop, delete): failures show as a toast, and every list refreshes after it. */
export function useSourceAction<A>(
  action: (arg: A) => Promise<unknown>,
  messages: { failure: string; success?: (arg: A) => string },
) {
  const refresh = useRefreshSources()
  return useMutation({
    mutationFn: action,
    onSuccess: (_result, arg) => {
      if (messages.success) {
        toast.success(messages.success(arg))
      }
    },
    onError: (error) => {
      toast.error(messages.failure, { description: error.message })
    },
    onSettled: () => refresh(),
  })
}
