import { useId } from 'react'
import styles from './DashboardPage.module.css'
import type { AreaSummary, CardSeverity } from './overview'

const severityClasses = {
  success: styles.success,
  warning: styles.warning,
  error: styles.error,
  unknown: styles.unknown,
} satisfies Record<CardSeverity, string | undefined>

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
        <span className={`${styles.badge} ${severityClasses[summary.severity]}`} data-testid={`area-health-${slug}`}>
          {summary.status}
        </span>
        {summary.isLoading && (
          <span className={styles.loading} role="status">
            Loading…
          </span>
        )}
      </p>
    </section>
  )
}
