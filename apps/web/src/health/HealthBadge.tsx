import type { ItemHealth } from '@relay/contracts'
import { Badge, type Tone } from '../ui/Badge'
import common from '../ui/common.module.css'
import { explainError } from '../ui/friendly-error'
import styles from './Health.module.css'
import { type HealthSubject, healthBadge } from './health-badge'

const reasonTones: Partial<Record<Tone, string>> = { danger: styles.danger, warn: styles.warn }

/**
 * An item's health in words and colour, with the reason below when it is not healthy: its sentence
 * only, as the raw error is usually beside it already (a collector's last fetch); the tooltip keeps it.
 */
export function HealthBadge(props: { health: ItemHealth; subject: HealthSubject; testId?: string }) {
  const view = healthBadge(props.health, props.subject)
  return (
    <>
      <Badge small tone={view.tone} state={props.health.state} testId={props.testId}>
        {view.label}
      </Badge>
      {view.reason && (
        <span className={`${common.sub} ${styles.reason} ${reasonTones[view.tone] ?? ''}`} title={view.reason}>
          {explainError(view.reason).sentence}
        </span>
      )}
    </>
  )
}
