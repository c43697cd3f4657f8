import {
  type BackupFrequency,
  backupRetentionEndpoints as endpoints,
  type KeepPolicyChange,
  type RetentionReply,
} from '@relay/contracts'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { call } from '../api'
import { backupKeys } from './queries'

/**
 * Under the page's keys, so a finished backup or a deletion refreshes the projection with the list;
 * by frequency too, since the policy keeps more backups the more often they are made.
 */
const retentionKey = (frequency: BackupFrequency) => [...backupKeys.all, 'retention', frequency]

/** The keep policy, and how many backups fit in the account's quota (when the cloud can tell). */
export function useRetention(frequency: BackupFrequency) {
  return useQuery({
    queryKey: retentionKey(frequency),
    queryFn: ({ signal }) => call(endpoints.getRetention, { signal }),
  })
}

export function useSaveKeepPolicy(frequency: BackupFrequency) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (change: KeepPolicyChange) => call(endpoints.updateRetention, { body: change }),
    onSuccess: (reply: RetentionReply) => queryClient.setQueryData(retentionKey(frequency), reply),
  })
}
