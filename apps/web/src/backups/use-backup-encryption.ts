import { useQuery } from '@tanstack/react-query'
import { api } from '../api'
import { backupKeys } from './queries'

/** Under the page's keys: a restore, which refreshes them all, shows the passphrase state anew. */
export const encryptionKey = [...backupKeys.all, 'encryption']

/** Whether this relay encrypts its backups (never the passphrase). */
export function useBackupEncryption() {
  return useQuery({ queryKey: encryptionKey, queryFn: ({ signal }) => api.backupEncryption(signal) })
}
