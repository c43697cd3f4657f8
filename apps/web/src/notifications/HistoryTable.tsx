import { type Notification, notificationTypes } from '@relay/contracts'
import { Badge, type Tone } from '../ui/Badge'
import { RelativeTime } from '../ui/RelativeTime'
import { TableHead } from '../ui/TableHead'
import { categoryLabels, typeLabels } from './labels'
import styles from './NotificationsPage.module.css'

const colorTones = {
  green: 'ok',
  red: 'danger',
  orange: 'warn',
  blue: 'accent',
} as const satisfies Record<(typeof notificationTypes)[keyof typeof notificationTypes]['color'], Tone>

/** One page of the history; dimmed while the next page loads in its place. */
export function HistoryTable({ notifications, isStale }: { notifications: readonly Notification[]; isStale: boolean }) {
  return (
    <div className={isStale ? `${styles.tableWrap} ${styles.stale}` : styles.tableWrap}>
      <table className={styles.table}>
        <TableHead columns={['Type', 'Category', 'Notification', 'When', 'Status']} hiddenOnPhone />
        <tbody>
          {notifications.map((notification) => (
            <HistoryRow key={notification.id} notification={notification} />
          ))}
        </tbody>
      </table>
    </div>
  )
}

function HistoryRow({ notification }: { notification: Notification }) {
  const { type, category } = notification
  return (
    <tr data-testid="history-row" data-type={type} data-category={category} data-id={notification.id}>
      <td className={styles.typeCell}>
        <Badge small tone={colorTones[notificationTypes[type].color]}>
          {typeLabels[type]}
        </Badge>
      </td>
      <td className={styles.categoryCell}>{categoryLabels[category]}</td>
      <td className={styles.textCell}>
        {notification.title && <strong className={styles.title}>{notification.title}</strong>}
        <span className={styles.message}>{notification.message}</span>
      </td>
      <td className={styles.timeCell}>
        <RelativeTime value={notification.createdAt} />
      </td>
      <td className={styles.statusCell}>
        {notification.isDelivered ? (
          <span className={styles.delivered} title={deliveredTitle(notification.deliveredAt)}>
            Delivered
          </span>
        ) : (
          <span className={styles.pending}>Pending</span>
        )}
      </td>
    </tr>
  )
}

function deliveredTitle(deliveredAt: string | null): string | undefined {
  return deliveredAt ? `Delivered ${new Date(deliveredAt).toLocaleString()}` : undefined
}
