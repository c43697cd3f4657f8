import { type BackupRecord, isEncryptedBackupName, type RelayBackupRecord } from '@relay/contracts'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { toast } from 'sonner'
import { api } from '../api'
import { Badge } from '../ui/Badge'
import { ConfirmButton } from '../ui/ConfirmButton'
import common from '../ui/common.module.css'
import { Panel } from '../ui/Panel'
import { RelativeTime } from '../ui/RelativeTime'
import { TableHead } from '../ui/TableHead'
import styles from './BackupsPage.module.css'
import { EncryptedBadge } from './EncryptedBadge'
import { formatBytes } from './format-bytes'
import { backupStatusBadges } from './labels'
import { backupKeys, useBackupList } from './queries'
import { RestoreDialog } from './RestoreDialog'
import type { BackupActivity } from './use-backup-activity'
import { VerificationNote } from './VerificationNote'

/** This relay's backups in Relay Cloud, newest first, with download, restore and delete. */
export function BackupsSection({ activity }: { activity: BackupActivity }) {
  const list = useBackupList()
  const [restoring, setRestoring] = useState<BackupRecord | null>(null)
  const count = list.data?.backups.length ?? 0
  const total = list.data?.total ?? 0

  return (
    <Panel
      title="Backups of this relay"
      description={
        <>
          Newest first.
          {total > count && ` Showing the newest ${count} of ${total}.`}
        </>
      }
      className={styles.panel}
    >
      {list.isPending && (
        <p role="status" className={styles.listState}>
          Loading backups…
        </p>
      )}
      {list.isError && (
        <div role="alert" className={styles.formAlert} data-testid="backups-list-error">
          <strong>Could not load the backups</strong>
          <p>{list.error.message}</p>
          <button
            type="button"
            className={styles.secondary}
            disabled={list.isFetching}
            onClick={() => void list.refetch()}
          >
            Try again
          </button>
        </div>
      )}
      {list.data && count === 0 && (
        <p className={styles.empty} data-testid="backups-empty">
          No backups yet. Choose <strong>Back up now</strong> to make the first one, or turn on automatic backups.
        </p>
      )}
      {list.data && count > 0 && (
        <div className={styles.tableWrap}>
          <table className={styles.table} data-testid="backups-table">
            <TableHead columns={['Created', 'Size', 'Status', 'Expires']} withActions />
            <tbody>
              {list.data.backups.map((backup) => (
                <BackupRow
                  key={backup.id}
                  backup={backup}
                  isBusy={activity.isBusy}
                  onRestore={() => {
                    activity.restore.reset()
                    setRestoring(backup)
                  }}
                  onVerify={() =>
                    activity.verify.mutate(backup.id, {
                      onError: (error) => toast.error('The verification did not start', { description: error.message }),
                    })
                  }
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <RestoreDialog backup={restoring} activity={activity} onClose={() => setRestoring(null)} />
    </Panel>
  )
}

function BackupRow(props: { backup: RelayBackupRecord; isBusy: boolean; onRestore: () => void; onVerify: () => void }) {
  const { backup } = props
  const queryClient = useQueryClient()
  const [isAsking, setAsking] = useState(false)
  const badge = backupStatusBadges[backup.status]
  const created = new Date(backup.createdAt)
  const remove = useMutation({
    mutationFn: () => api.deleteBackup(backup.id),
    onSuccess: () => toast.success('Deleted the backup', { description: backup.filename }),
    onError: (error) => {
      setAsking(false)
      toast.error('Could not delete the backup', { description: error.message })
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: backupKeys.all }),
  })
  const isCompleted = backup.status === 'completed'

  return (
    <tr data-testid="backup-row" data-id={backup.id} data-status={backup.status}>
      <td className={styles.createdCell}>
        <span className={common.strong}>
          {created.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
        </span>
        <span className={common.sub}>
          <RelativeTime value={backup.createdAt} />
        </span>
        {isCompleted && <VerificationNote verification={backup.verification} />}
      </td>
      <td className={`${styles.sizeCell} ${common.phoneLabel}`} data-label="Size" data-testid="backup-size">
        <span className={common.strong}>{formatBytes(backup.compressedSize)}</span>
        <span className={common.sub}>{formatBytes(backup.uncompressedSize)} unpacked</span>
      </td>
      <td className={styles.statusCell}>
        <Badge tone={badge.tone} testId="backup-status">
          {badge.label}
        </Badge>
        {isEncryptedBackupName(backup.filename) && <EncryptedBadge />}
      </td>
      <td className={`${styles.expiresCell} ${common.phoneLabel}`} data-label="Expires" data-testid="backup-expires">
        {backup.expiresAt ? <RelativeTime value={backup.expiresAt} /> : 'Never'}
      </td>
      <td className={styles.actionsCell}>
        <div className={styles.rowActions}>
          <ConfirmButton
            label="Delete"
            question="Delete for good?"
            confirmLabel="Yes, delete"
            pendingLabel="Deleting…"
            subject={backup.filename}
            isAsking={isAsking}
            onAskingChange={setAsking}
            isPending={remove.isPending}
            onConfirm={() => remove.mutate()}
            className={common.nowrap}
          >
            {isCompleted && (
              <a
                className={common.smallButton}
                href={api.backupDownloadUrl(backup.id)}
                download={backup.filename}
                aria-label={`Download ${backup.filename}`}
              >
                Download
              </a>
            )}
            {isCompleted && (
              <button
                type="button"
                className={common.smallButton}
                disabled={props.isBusy}
                onClick={props.onRestore}
                aria-label={`Restore ${backup.filename}`}
                aria-haspopup="dialog"
              >
                Restore
              </button>
            )}
            {isCompleted && (
              <button
                type="button"
                className={common.smallButton}
                disabled={props.isBusy}
                onClick={props.onVerify}
                aria-label={`Verify now ${backup.filename}`}
              >
                Verify now
              </button>
            )}
          </ConfirmButton>
        </div>
      </td>
    </tr>
  )
}
