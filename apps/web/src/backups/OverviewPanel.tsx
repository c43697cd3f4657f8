import { type BackupSettings, type BackupStatusReply, backupDueAfter, backupSchedule } from '@relay/contracts'
import { Badge } from '../ui/Badge'
import common from '../ui/common.module.css'
import { Fact } from '../ui/Fact'
import { Panel } from '../ui/Panel'
import { RelativeTime } from '../ui/RelativeTime'
import styles from './BackupsPage.module.css'
import { formatBytes } from './format-bytes'
import { componentLabels, components, frequencyLabels } from './labels'
import { UsageMeter } from './UsageMeter'

/** What is set up, when the last backup ran, and how much of the account's quota the backups use. */
export function OverviewPanel({ status }: { status: BackupStatusReply }) {
  const { settings, usage, lastBackup } = status
  return (
    <Panel title="Status" className={styles.panel} testId="backup-overview">
      <div className={common.panelBody}>
        <dl className={styles.facts}>
          <Fact label="Automatic backups" testId="backup-enabled">
            {settings.enabled ? <Badge tone="ok">On</Badge> : <Badge tone="muted">Off</Badge>}
          </Fact>
          <Fact label="Frequency" testId="backup-frequency">
            {frequencyLabels[settings.frequency]}
          </Fact>
          <Fact label="Kept for" testId="backup-retention">
            {settings.retentionDays === 1 ? '1 day' : `${settings.retentionDays} days`}
          </Fact>
          <Fact label="Last backup" testId="backup-last">
            {lastBackup ? (
              <>
                <RelativeTime value={lastBackup.createdAt} />
                <span className={common.sub}>{formatBytes(lastBackup.compressedSize)}</span>
              </>
            ) : settings.lastBackup ? (
              <RelativeTime value={settings.lastBackup} />
            ) : (
              <span className={common.mutedText}>None yet</span>
            )}
          </Fact>
          {settings.enabled && (
            <Fact label="Next backup" testId="backup-next">
              <NextBackup settings={settings} />
            </Fact>
          )}
          <Fact label="Included" testId="backup-included">
            <span>
              Database
              {components
                .filter((component) => settings[component])
                .map((component) => `, ${componentLabels[component].toLowerCase()}`)
                .join('')}
            </span>
          </Fact>
        </dl>
      </div>
      <div className={common.panelBody}>
        <div className={styles.meters}>
          <UsageMeter
            label="Storage"
            value={usage.totalBytes}
            max={usage.maxTotalBytes}
            format={formatBytes}
            testId="usage-storage"
          />
          <UsageMeter
            label="Backups"
            value={usage.backupCount}
            max={usage.maxBackups}
            format={(count) => count.toLocaleString()}
            testId="usage-count"
          />
        </div>
        <p className={styles.hint}>
          Counted over all relays of your Relay Cloud account. A single backup may be up to{' '}
          {formatBytes(usage.maxBackupBytes)}.
        </p>
      </div>
    </Panel>
  )
}

/** When the scheduler will next find a backup due; it looks every 15 minutes. */
function NextBackup({ settings }: { settings: BackupSettings }) {
  const checkMinutes = backupSchedule.checkInterval / 60_000
  if (!settings.lastBackup) {
    return <span>Within {checkMinutes} minutes</span>
  }
  const due = new Date(new Date(settings.lastBackup).getTime() + backupDueAfter[settings.frequency])
  if (due.getTime() <= Date.now()) {
    return <span>Within {checkMinutes} minutes</span>
  }
  return <RelativeTime value={due.toISOString()} />
}
