import { dashboardPolling, type HealthIssue, type Silence } from '@relay/contracts'
import { useId, useRef, useState } from 'react'
import { Link } from 'react-router'
import { issueLink } from '../health/item-links'
import { AlertForm } from '../health-alerts/AlertForm'
import { AlertMarks } from '../health-alerts/AlertMarks'
import alertStyles from '../health-alerts/HealthAlerts.module.css'
import { silenceCovering } from '../health-alerts/health-alerts'
import { Badge } from '../ui/Badge'
import common from '../ui/common.module.css'
import { ErrorText } from '../ui/ErrorText'
import { RelativeTime } from '../ui/RelativeTime'
import { TableHead } from '../ui/TableHead'
import styles from './DashboardPage.module.css'
import { countIssues, plural } from './overview'
import { useStoredBoolean } from './use-stored-boolean'

const severityLabels = { error: 'Error', warning: 'Warning' } satisfies Record<HealthIssue['type'], string>

/**
 * The issues behind the area cards, worst first, each leading to its item and offering to acknowledge
 * or silence it; in a section that remembers whether it was left open.
 */
export function WarningsSection({
  issues,
  silences,
}: {
  issues: readonly HealthIssue[]
  silences: readonly Silence[]
}) {
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
          <IssueTable issues={issues} silences={silences} />
        )}
      </div>
    </section>
  )
}

function IssueTable({ issues, silences }: { issues: readonly HealthIssue[]; silences: readonly Silence[] }) {
  return (
    <table className={styles.table}>
      <TableHead columns={['Area', 'Severity', 'Issue', 'Description', 'Time', 'Status']} hiddenOnPhone />
      {issues.map((issue) => (
        <IssueRows key={issue.id} issue={issue} silences={silences} />
      ))}
    </table>
  )
}

const formLabels = { acknowledge: 'Acknowledge', silence: 'Silence' } as const

/** Items that have warnings to acknowledge; junctions and sensors can only be silenced. */
const isAcknowledgeable = (item: string) => /^(collector|stream):/.test(item)

/** One issue, and below it the form to acknowledge or silence it when one is open. */
function IssueRows({ issue, silences }: { issue: HealthIssue; silences: readonly Silence[] }) {
  const [open, setOpen] = useState<'acknowledge' | 'silence' | null>(null)
  const formId = useId()
  const openerRef = useRef<HTMLButtonElement | null>(null)
  const { item } = issue
  const toggle = (form: 'acknowledge' | 'silence', button: HTMLButtonElement) => {
    openerRef.current = button
    setOpen(open === form ? null : form)
  }
  // Back to the button that opened the form, so the keyboard stays where it was.
  const close = () => {
    setOpen(null)
    openerRef.current?.focus()
  }
  const silence = item ? silenceCovering(silences, item) : undefined
  const canAcknowledge = item !== undefined && isAcknowledgeable(item) && !issue.acknowledged
  const canSilence = item !== undefined && !issue.silenced

  return (
    <tbody>
      <tr
        className={issue.silenced ? alertStyles.silenced : undefined}
        data-testid="warnings-row"
        data-issue-id={issue.id}
        data-item={item}
        data-severity={issue.type}
        data-acknowledged={issue.acknowledged ? true : undefined}
        data-silenced={issue.silenced ? true : undefined}
      >
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
        <td className={styles.statusCell}>
          <div className={styles.status}>
            {item && (
              <AlertMarks
                item={item}
                subject={issue.title}
                acknowledged={issue.acknowledged}
                silenced={issue.silenced}
                silenceIsAreaWide={silence !== undefined && 'area' in silence.target}
              />
            )}
            {(canAcknowledge || canSilence) && (
              <div className={alertStyles.actions}>
                {(['acknowledge', 'silence'] as const)
                  .filter((form) => (form === 'acknowledge' ? canAcknowledge : canSilence))
                  .map((form) => (
                    <button
                      key={form}
                      type="button"
                      className={alertStyles.button}
                      aria-expanded={open === form}
                      aria-controls={open === form ? formId : undefined}
                      onClick={(event) => toggle(form, event.currentTarget)}
                    >
                      {formLabels[form]}
                      <span className={common.visuallyHidden}> {issue.title}</span>
                    </button>
                  ))}
              </div>
            )}
          </div>
        </td>
      </tr>
      {open && item && (
        <tr className={styles.formRow} id={formId}>
          <td colSpan={6}>
            <AlertForm kind={open} target={{ item }} subject={issue.title} onDone={close} />
          </td>
        </tr>
      )}
    </tbody>
  )
}
