import { dashboardPolling, type HealthIssue } from '@relay/contracts'
import { useId } from 'react'
import { Link } from 'react-router'
import { issueLink } from '../health/item-links'
import { Badge } from '../ui/Badge'
import { ErrorText } from '../ui/ErrorText'
import { RelativeTime } from '../ui/RelativeTime'
import { TableHead } from '../ui/TableHead'
import styles from './DashboardPage.module.css'
import { countIssues, plural } from './overview'
import { useStoredBoolean } from './use-stored-boolean'

const severityLabels = { error: 'Error', warning: 'Warning' } satisfies Record<HealthIssue['type'], string>

/**
 * The issues behind the area cards, worst first, each leading to its item; in a section that
 * remembers whether it was left open.
 */
export function WarningsSection({ issues }: { issues: readonly HealthIssue[] }) {
  const [isExpanded, setExpanded] = useStoredBoolean(dashboardPolling.expandedStorageKey, false)
  const headingId = useId()
  const panelId = useId()
  const { errors, warnings } = countIssues(issues)

  return (
    <section className={styles.warnings} aria-labelledby={headingId}>
      <div className={styles.warningsBar}>
        <h2 id={headingId} className={styles.warningsTitle} data-testid="warnings-header">
          {issues.length === 0 ? (
            'No Warnings'
          ) : (
            <>
              Current Warnings
              <span className={styles.separator}> · </span>
              <span className={errors > 0 ? styles.errorCount : styles.zeroCount}>{plural(errors, 'error')}</span>
              <span className={styles.separator}> · </span>
              <span className={warnings > 0 ? styles.warningCount : styles.zeroCount}>
                {plural(warnings, 'warning')}
              </span>
            </>
          )}
        </h2>
        <button
          type="button"
          className={styles.toggle}
          aria-expanded={isExpanded}
          aria-controls={panelId}
          data-testid="warnings-toggle"
          onClick={() => setExpanded(!isExpanded)}
        >
          {isExpanded ? 'Hide details' : 'Show details'}
        </button>
      </div>
      <div id={panelId} hidden={!isExpanded} className={styles.warningsPanel}>
        {issues.length === 0 ? (
          <p className={styles.allClear}>Nothing needs attention: every collector, sensor and stream is healthy.</p>
        ) : (
          <IssueTable issues={issues} />
        )}
      </div>
    </section>
  )
}

function IssueTable({ issues }: { issues: readonly HealthIssue[] }) {
  return (
    <table className={styles.table}>
      <TableHead columns={['Area', 'Severity', 'Issue', 'Description', 'Time']} hiddenOnPhone />
      <tbody>
        {issues.map((issue) => (
          <tr key={issue.id} data-testid="warnings-row" data-issue-id={issue.id} data-severity={issue.type}>
            <td className={styles.areaCell}>{issue.area}</td>
            <td className={styles.severityCell}>
              <Badge small tone={issue.type === 'error' ? 'danger' : 'warn'}>
                {severityLabels[issue.type]}
              </Badge>
            </td>
            <td className={styles.issueCell}>
              <Link to={issueLink(issue)} className={styles.issueLink}>
                {issue.title}
              </Link>
            </td>
            <td className={styles.descriptionCell}>
              <ErrorText raw={issue.description} />
            </td>
            <td className={styles.timeCell}>{issue.timestamp ? <RelativeTime value={issue.timestamp} /> : 'Never'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
