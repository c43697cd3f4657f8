import type {
  BackupList,
  BackupRecord,
  BackupSettings,
  BackupSettingsChange,
  BackupStatusReply,
  DownloadGrant,
  UploadGrant,
  UploadRequest,
} from '@relay/contracts'
import type { CloudConnectionService } from '../cloud-client/connection.js'

/** The cloud's backup endpoints, called with the relay's access token. */
export function createCloudBackups(cloud: Pick<CloudConnectionService, 'request'>) {
  return {
    status: () => cloud.request<BackupStatusReply>('GET', '/cloud-backups/status'),
    saveSettings: async (change: BackupSettingsChange) =>
      (await cloud.request<{ settings: BackupSettings }>('POST', '/cloud-backups/settings', change)).settings,
    requestUpload: (body: UploadRequest) => cloud.request<UploadGrant>('POST', '/cloud-backups/request-upload', body),
    completeUpload: async (backupId: string, actualCompressedSize: number) =>
      (
        await cloud.request<{ backup: BackupRecord }>('POST', '/cloud-backups/complete-upload', {
          backupId,
          actualCompressedSize,
        })
      ).backup,
    list: (query: { backendId?: string; limit: number; offset?: number }) => {
      const search = new URLSearchParams({ limit: String(query.limit) })
      if (query.backendId) {
        search.set('backendId', query.backendId)
      }
      if (query.offset) {
        search.set('offset', String(query.offset))
      }
      return cloud.request<BackupList>('GET', `/cloud-backups/list?${search}`)
    },
    requestDownload: (backupId: string) =>
      cloud.request<DownloadGrant>('POST', `/cloud-backups/${encodeURIComponent(backupId)}/request-download`),
    remove: (backupId: string) => cloud.request<unknown>('DELETE', `/cloud-backups/${encodeURIComponent(backupId)}`),
  }
}

export type CloudBackups = ReturnType<typeof createCloudBackups>
