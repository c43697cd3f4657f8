import type { BackupRecord } from '@relay/contracts'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { toast } from 'sonner'
import { api } from '../api'
import { RelativeTime } from '../ui/RelativeTime'
import styles from './BackupsPage.module.css'
import { formatBytes } from './format-bytes'
import { backupStatusBadges, type Tone } from './labels'
import { backupKeys, useBackupList } from './queries'
import { RestoreDialog } from './RestoreDialog'
import type { BackupActivity } from './use-backup-activity'

const toneClasses = {
  ok: styles.ok,
  warn: styles.warn,
  danger: styles.danger,
  muted: styles.mutedBadge,
} satisfies Record<Tone, string | undefined>

/** This relay's backups in Relay Cloud, newest first, with download, restore and delete. */
export function BackupsSection({ activity }: { activity: BackupActivity }) {
  const headingId = useId()
  const list = useBackupList()
  const [restoring, setRestoring] = useState<BackupRecord | null>(null)
  const count = list.data?.backups.length ?? 0
  const total = list.data?.total ?? 0

  return (
    <section className={styles.panel} aria-labelledby={headingId}>
      <header className={styles.panelHeader}>
        <h2 id={headingId}>Backups of this relay</h2>
        <p className={styles.mutedText}>
          Newest first.
          {total > count && ` Showing the newest ${count} of ${total}.`}
        </p>
      </header>
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
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Size</th>
                <th scope="col">Status</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span className={styles.visuallyHidden}>Actions</span>
                </th>
              </tr>
            </thead>
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
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <RestoreDialog backup={restoring} activity={activity} onClose={() => setRestoring(null)} />
    </section>
  )
}

function BackupRow(props: { backup: BackupRecord; isBusy: boolean; onRestore: () => void }) {
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
        <span className={styles.strong}>
          {created.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
        </span>
        <span className={styles.sub}>
          <RelativeTime value={backup.createdAt} />
        </span>
      </td>
      <td className={styles.sizeCell} data-label="Size" data-testid="backup-size">
        <span className={styles.strong}>{formatBytes(backup.compressedSize)}</span>
        <span className={styles.sub}>{formatBytes(backup.uncompressedSize)} unpacked</span>
      </td>
      <td className={styles.statusCell}>
        <span className={`${styles.badge} ${toneClasses[badge.tone]}`} data-testid="backup-status">
          {badge.label}
        </span>
      </td>
      <td className={styles.expiresCell} data-label="Expires" data-testid="backup-expires">
        {backup.expiresAt ? <RelativeTime value={backup.expiresAt} /> : 'Never'}
      </td>
      <td className={styles.actionsCell}>
        <div className={styles.rowActions}>
          {isAsking ? (
            <span className={styles.confirm}>
              <span className={styles.confirmText}>Delete for good?</span>
              <button
                type="button"
                className={styles.dangerSolid}
                disabled={remove.isPending}
                onClick={() => remove.mutate()}
                aria-label={`Yes, delete ${backup.filename}`}
              >
                {remove.isPending ? 'Deleting…' : 'Yes, delete'}
              </button>
              <button type="button" className={styles.smallButton} onClick={() => setAsking(false)}>
                Cancel
              </button>
            </span>
          ) : (
            <>
              {isCompleted && (
                <a
                  className={styles.smallButton}
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
                  className={styles.smallButton}
                  disabled={props.isBusy}
                  onClick={props.onRestore}
                  aria-label={`Restore ${backup.filename}`}
                  aria-haspopup="dialog"
                >
                  Restore
                </button>
              )}
              <button
                type="button"
                className={styles.smallDanger}
                onClick={() => setAsking(true)}
                aria-label={`Delete ${backup.filename}`}
              >
                Delete
              </button>
            </>
          )}
        </div>
      </td>
    </tr>
  )
}
