import common from '../ui/common.module.css'
import { AreaCard } from './AreaCard'
import styles from './DashboardPage.module.css'
import { currentIssues, summarizeAreas } from './overview'
import { useOverview } from './use-overview'
import { WarningsSection } from './WarningsSection'

export function DashboardPage() {
  const overview = useOverview()
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
      <div className={styles.areas}>
        {summarizeAreas(overview).map((summary) => (
          <AreaCard key={summary.area} summary={summary} />
        ))}
      </div>
      <WarningsSection issues={currentIssues(overview)} />
    </>
  )
}
