import { useId } from 'react'
import { Link } from 'react-router'
import { areaSilence } from '../health-alerts/health-alerts'
import { useSilences } from '../health-alerts/queries'
import common from '../ui/common.module.css'
import { AreaCard } from './AreaCard'
import styles from './DashboardPage.module.css'
import { currentIssues, isUnconfigured, summarizeAreas } from './overview'
import { useOverview } from './use-overview'
import { WarningsSection } from './WarningsSection'

export function DashboardPage() {
  const overview = useOverview()
  const silences = useSilences().data ?? []
  const updatedAt = new Date(overview.updatedAt)
  return (
    <>
      <title>Dashboard · Relay</title>
      <div className={styles.pageHeader}>
        <h1>Dashboard</h1>
        {overview.updatedAt > 0 && (
          <p className={common.pageHeaderNote}>
            Updated <time dateTime={updatedAt.toISOString()}>{updatedAt.toLocaleTimeString()}</time>
          </p>
        )}
      </div>
      {isUnconfigured(overview) ? (
        <Onboarding />
      ) : (
        <>
          <div className={styles.areas}>
            {summarizeAreas(overview).map((summary) => (
              <AreaCard key={summary.area} summary={summary} silence={areaSilence(silences, summary.area)} />
            ))}
          </div>
          <WarningsSection issues={currentIssues(overview)} silences={silences} />
        </>
      )}
    </>
  )
}

/** A fresh relay has nothing to report on: cards of zeros reading "All Healthy" would say nothing true. */
function Onboarding() {
  const headingId = useId()
  return (
    <section className={styles.onboarding} aria-labelledby={headingId} data-testid="dashboard-onboarding">
      <h2 id={headingId}>Nothing to watch yet</h2>
      <p className={common.mutedText}>
        Add a collector to read sensor values, then a stream to send them to and a junction that links the two. Their
        health shows here once they run.
      </p>
      <Link to="/sources?tab=collectors&new=collector" className={styles.onboardingLink}>
        Add your first collector
      </Link>
    </section>
  )
}
