import { useId } from 'react'
import { Badge, type Tone } from '../ui/Badge'
import styles from './DashboardPage.module.css'
import type { AreaSummary, CardSeverity } from './overview'

const severityTones = {
  success: 'ok',
  warning: 'warn',
  error: 'danger',
  unknown: 'muted',
} as const satisfies Record<CardSeverity, Tone>

/** One area's active count and health; the health is spelled out, never shown by colour alone. */
export function AreaCard({ summary }: { summary: AreaSummary }) {
  const headingId = useId()
  const slug = summary.area.toLowerCase()
  return (
    <section
      className={styles.card}
      aria-labelledby={headingId}
      aria-busy={summary.isLoading}
      data-testid={`area-card-${slug}`}
      data-severity={summary.severity}
    >
      <h2 id={headingId} className={styles.cardTitle}>
        {summary.area}
      </h2>
      <p className={styles.count}>
        <span className={styles.active} data-testid={`area-active-${slug}`}>
          {summary.active}
        </span>
        <span className={styles.total}>
          {' / '}
          {summary.total ?? '–'}
        </span>
        <span className={styles.countLabel}> active</span>
      </p>
      <p className={styles.cardFooter}>
        <Badge small tone={severityTones[summary.severity]} testId={`area-health-${slug}`}>
          {summary.status}
        </Badge>
        {summary.isLoading && (
          <span className={styles.loading} role="status">
            Loading…
          </span>
        )}
      </p>
    </section>
  )
}
