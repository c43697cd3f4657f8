import type { HealthArea, Silence } from '@relay/contracts'
import { useId } from 'react'
import { Link } from 'react-router'
import { areaLink } from '../health/item-links'
import { AreaSilence } from '../health-alerts/AreaSilence'
import { Badge, type Tone } from '../ui/Badge'
import styles from './DashboardPage.module.css'
import type { AreaSummary, CardSeverity } from './overview'

const severityTones = {
  success: 'ok',
  warning: 'warn',
  error: 'danger',
  unknown: 'muted',
} as const satisfies Record<CardSeverity, Tone>

/** What the active ones of an area are doing. */
const activeLabels = {
  Junctions: 'running',
  Collectors: 'polling',
  Streams: 'sending',
  Sensors: 'active',
} as const satisfies Record<HealthArea, string>

/**
 * One area's active count, how many of those fail, and its health; the health is spelled out, never
 * shown by colour alone. The title and the failing count lead to the area's list on the Sources page;
 * below, the whole area can be silenced.
 */
export function AreaCard({ summary, silence }: { summary: AreaSummary; silence: Silence | undefined }) {
  const headingId = useId()
  const slug = summary.area.toLowerCase()
  const link = areaLink(summary.area)
  return (
    <section
      className={styles.card}
      aria-labelledby={headingId}
      aria-busy={summary.isLoading}
      data-testid={`area-card-${slug}`}
      data-severity={summary.severity}
    >
      <h2 id={headingId} className={styles.cardTitle}>
        <Link to={link} className={styles.cardLink}>
          {summary.area}
        </Link>
      </h2>
      <p className={styles.count}>
        <span className={styles.active} data-testid={`area-active-${slug}`}>
          {summary.active}
        </span>
        <span className={styles.total}>
          {' / '}
          {summary.total ?? '–'}
        </span>
        <span className={styles.countLabel}> {activeLabels[summary.area]}</span>
      </p>
      {(summary.failing > 0 || summary.degraded > 0) && (
        <p className={styles.problems} data-testid={`area-problems-${slug}`}>
          {summary.failing > 0 && (
            <Link to={link} className={styles.failingCount}>
              · {summary.failing} failing
            </Link>
          )}
          {summary.degraded > 0 && <span className={styles.degradedCount}> · {summary.degraded} degraded</span>}
        </p>
      )}
      <div className={styles.cardFooter}>
        <Badge small tone={severityTones[summary.severity]} testId={`area-health-${slug}`}>
          {summary.status}
        </Badge>
        {summary.isLoading && (
          <span className={styles.loading} role="status">
            Loading…
          </span>
        )}
        <AreaSilence area={summary.area} silence={silence} />
      </div>
    </section>
  )
}
