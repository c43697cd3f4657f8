import {
  backupSchedule,
  type VerificationFrequency,
  type VerificationOverview,
  verificationFrequencies,
} from '@relay/contracts'
import { Badge } from '../ui/Badge'
import common from '../ui/common.module.css'
import { Fact } from '../ui/Fact'
import form from '../ui/form.module.css'
import { Panel } from '../ui/Panel'
import { QueryStatus } from '../ui/QueryStatus'
import { RelativeTime } from '../ui/RelativeTime'
import { SettingRow } from '../ui/SettingRow'
import pageStyles from './BackupsPage.module.css'
import { frequencyLabels as backupFrequencyLabels } from './labels'
import styles from './verification.module.css'
import { useSaveVerificationSettings, useVerificationOverview } from './verification-queries'

const frequencyLabels = { off: 'Off', ...backupFrequencyLabels } as const satisfies Record<
  VerificationFrequency,
  string
>

/**
 * How often the relay proves its newest backup can be restored, and what the last check found. A check
 * downloads the backup and tests it apart from the relay, so it never changes anything here.
 */
export function VerificationPanel() {
  const overview = useVerificationOverview()
  const save = useSaveVerificationSettings()
  return (
    <Panel
      title="Verification"
      description="The relay downloads a backup and checks it can be restored: its checksums, every file in it, and the database's own integrity check. Nothing on the relay changes."
      className={styles.panel}
      testId="backup-verification-panel"
    >
      <QueryStatus
        query={overview}
        loading="Reading the verification setting…"
        failed="Could not read the verification setting"
      />
      {overview.data && (
        <div className={styles.body}>
          <SettingRow
            label="Verify the newest backup"
            help="How often the relay checks its newest completed backup. Any backup can be checked at once with Verify now in the list below."
            error={save.isError ? `Not saved: ${save.error.message}` : null}
            errorTestId="verification-save-error"
          >
            {(control) => (
              <select
                {...control}
                className={form.select}
                value={save.isPending ? save.variables.frequency : overview.data.settings.frequency}
                disabled={save.isPending}
                onChange={(event) => save.mutate({ frequency: event.target.value as VerificationFrequency })}
              >
                {verificationFrequencies.map((frequency) => (
                  <option key={frequency} value={frequency}>
                    {frequencyLabels[frequency]}
                  </option>
                ))}
              </select>
            )}
          </SettingRow>
          <dl className={pageStyles.facts}>
            <Fact label="Last check" testId="verification-last">
              <LastRun overview={overview.data} />
            </Fact>
            <Fact label="Next check" testId="verification-next">
              <NextCheck overview={overview.data} />
            </Fact>
          </dl>
        </div>
      )}
    </Panel>
  )
}

function LastRun({ overview }: { overview: VerificationOverview }) {
  const { lastRun } = overview
  if (!lastRun) {
    return <span className={common.mutedText}>None yet</span>
  }
  return (
    <>
      {lastRun.outcome === 'ok' ? <Badge tone="ok">Verified</Badge> : <Badge tone="danger">Failed</Badge>}{' '}
      <RelativeTime value={lastRun.checkedAt} />
      {lastRun.error && <p className={`${styles.lastError} ${styles.failed}`}>{lastRun.error}</p>}
    </>
  )
}

/** The scheduler looks every 15 minutes: a check due already runs within that. */
function NextCheck({ overview }: { overview: VerificationOverview }) {
  if (overview.nextDueAt === null) {
    return <span className={common.mutedText}>Off</span>
  }
  if (Date.parse(overview.nextDueAt) <= Date.now()) {
    return <span>Within {backupSchedule.checkInterval / 60_000} minutes</span>
  }
  return <RelativeTime value={overview.nextDueAt} />
}
