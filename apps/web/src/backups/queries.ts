import { useQuery } from '@tanstack/react-query'
import { ApiError, api } from '../api'
import { isFinished } from './labels'

/** Backups shown in the table: the newest, as many as the cloud lists in one page. */
export const listLimit = 50
/** How often a running backup or restore is asked for its progress. */
export const progressPollMs = 500
/** How often the page looks for a backup it did not start (the scheduler's). */
const operationsPollMs = 10_000

export const backupKeys = {
  all: ['cloud-backups'],
  status: ['cloud-backups', 'status'],
  list: ['cloud-backups', 'list'],
  operations: ['cloud-backups', 'operations'],
  operation: (id: string) => ['cloud-backups', 'operations', id],
} as const

/**
 * A refusal (not connected, no license, bad id) stays a refusal: asking again only delays saying so.
 * An unreachable cloud is asked once more, then the page says so and offers to try again.
 */
function retryUnlessRefused(failureCount: number, error: Error): boolean {
  if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
    return false
  }
  return failureCount < 1
}

export function useBackupStatus() {
  return useQuery({
    queryKey: backupKeys.status,
    queryFn: ({ signal }) => api.backupStatus(signal),
    retry: retryUnlessRefused,
  })
}

export function useBackupList() {
  return useQuery({
    queryKey: backupKeys.list,
    queryFn: ({ signal }) => api.backups({ limit: listLimit }, signal),
    retry: retryUnlessRefused,
  })
}

export function useBackupOperations(isPolling: boolean) {
  return useQuery({
    queryKey: backupKeys.operations,
    queryFn: ({ signal }) => api.backupOperations(signal),
    refetchInterval: isPolling ? operationsPollMs : false,
    retry: retryUnlessRefused,
  })
}

/** One backup or restore, polled until it is done or failed. */
export function useBackupOperation(id: string | null) {
  return useQuery({
    queryKey: backupKeys.operation(id ?? ''),
    queryFn: ({ signal }) => api.backupOperation(id ?? '', signal),
    enabled: id !== null,
    refetchInterval: (query) => {
      const operation = query.state.data
      return query.state.status === 'error' || (operation && isFinished(operation)) ? false : progressPollMs
    },
    retry: retryUnlessRefused,
  })
}
