import common from '../ui/common.module.css'
import styles from './Health.module.css'
import { type Activity, heartbeatSlots, heartbeatSummary } from './heartbeat'
import { useHeartbeat } from './queries'

export const pollActivity: Activity = { singular: 'poll', plural: 'polls' }
export const sendActivity: Activity = { singular: 'send', plural: 'sends' }

/**
 * The last hour of an item, a slot per minute: green when every poll worked, amber when some failed,
 * red when all did, hollow when none happened. Each slot names its minute for screen readers and in
 * its tooltip, and a line of text sums the bar up, so the colours are never the only signal.
 */
export function HeartbeatBar(props: { item: string; name: string; activity: Activity }) {
  const history = useHeartbeat(props.item)
  if (!history.data) {
    return (
      <span className={common.mutedText} data-testid="heartbeat">
        {history.isError ? 'History unavailable' : 'Loading history…'}
      </span>
    )
  }
  const slots = heartbeatSlots(history.data.from, history.data.buckets, props.activity)
  return (
    <div className={styles.heartbeat} data-testid="heartbeat">
      <ol className={styles.bar} aria-label={`Last hour of ${props.name}, minute by minute`}>
        {slots.map((slot) => (
          <li
            key={slot.start.getTime()}
            className={styles.slot}
            data-status={slot.status}
            aria-label={slot.label}
            title={slot.label}
          />
        ))}
      </ol>
      <span className={styles.heartbeatSummary} data-testid="heartbeat-summary">
        {heartbeatSummary(slots, props.activity)}
      </span>
    </div>
  )
}
