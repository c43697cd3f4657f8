import { type BackupStatusReply, backupLimits, backupQuota } from '@relay/contracts'
import { type ReactNode, useId } from 'react'
import { Link } from 'react-router'
import { ApiError } from '../api'
import { goToCloudSignIn } from '../auth/cloud-sign-in'
import { useAuthStatus } from '../auth/use-auth-status'
import common from '../ui/common.module.css'
import { ActivityPanel } from './ActivityPanel'
import styles from './BackupsPage.module.css'
import { BackupsSection } from './BackupsSection'
import { EncryptionPanel } from './EncryptionPanel'
import { formatBytes } from './format-bytes'
import { KeepPolicyPanel } from './KeepPolicyPanel'
import { OverviewPanel } from './OverviewPanel'
import { useBackupStatus } from './queries'
import { SettingsPanel } from './SettingsPanel'
import { useBackupActivity } from './use-backup-activity'
import { VerificationPanel } from './VerificationPanel'

const backupsPath = '/backups'

/** This relay's cloud backups: whether and how often they run, the quota, the backups, and restores. */
export function BackupsPage() {
  const status = useBackupStatus()
  const isNotConnected = status.error instanceof ApiError && status.error.code === 'CLOUD_NOT_AUTHENTICATED'
  // After a failed refresh the last known state stays on screen, under this message.
  const problem = status.isError && !isNotConnected && (
    <div role="alert" className={styles.pageAlert} data-testid="backups-error">
      <strong>{status.data ? 'Could not refresh your cloud backups' : 'Could not load your cloud backups'}</strong>
      <p>{status.error.message}</p>
      <button
        type="button"
        className={styles.secondary}
        disabled={status.isFetching}
        onClick={() => void status.refetch()}
      >
        {status.isFetching ? 'Trying…' : 'Try again'}
      </button>
    </div>
  )
  return (
    <>
      <title>Cloud backups · Relay</title>
      {status.isPending && (
        <>
          <PageHeader />
          <p role="status" className={common.mutedText}>
            Asking Relay Cloud about your backups…
          </p>
        </>
      )}
      {isNotConnected && (
        <>
          <PageHeader />
          <NotConnectedPanel />
        </>
      )}
      {!isNotConnected && status.data && status.data.hasValidLicense && (
        <LicensedPage status={status.data} problem={problem} />
      )}
      {!isNotConnected && status.data && !status.data.hasValidLicense && <ProGate problem={problem} />}
      {!status.data && problem && (
        <>
          <PageHeader />
          {problem}
        </>
      )}
    </>
  )
}

function PageHeader({ action }: { action?: ReactNode }) {
  return (
    <div className={styles.pageHeader}>
      <div>
        <h1>Cloud backups</h1>
        <p className={common.mutedText}>Copies of this relay's database and settings, kept in Relay Cloud.</p>
      </div>
      {action}
    </div>
  )
}

function LicensedPage({ status, problem }: { status: BackupStatusReply; problem: ReactNode }) {
  const activity = useBackupActivity()
  return (
    <>
      <PageHeader
        action={
          <button
            type="button"
            className={styles.primary}
            disabled={activity.isBusy}
            onClick={() => activity.backUp.mutate()}
          >
            {activity.backUp.isPending ? 'Starting…' : 'Back up now'}
          </button>
        }
      />
      {problem}
      <ActivityPanel activity={activity} />
      <div className={styles.columns}>
        <OverviewPanel status={status} />
        <SettingsPanel settings={status.settings} />
      </div>
      <KeepPolicyPanel frequency={status.settings.frequency} />
      <EncryptionPanel />
      <VerificationPanel />
      <BackupsSection activity={activity} />
    </>
  )
}

/** The relay holds no cloud session: backups go through it, so that comes first. */
function NotConnectedPanel() {
  const headingId = useId()
  const auth = useAuthStatus().data
  const hasProblem = Boolean(auth?.cloud) && !auth?.backendAuthenticated
  return (
    <section className={styles.gate} aria-labelledby={headingId} data-testid="backups-not-connected">
      <h2 id={headingId}>{hasProblem ? 'Reconnect the relay to Relay Cloud' : 'Connect the relay to Relay Cloud'}</h2>
      <p>
        Backups are stored in your Relay Cloud account, and this relay sends them there itself.{' '}
        {hasProblem
          ? 'It was connected, but the cloud no longer accepts its sign-in.'
          : 'It is not connected to a cloud account.'}
      </p>
      {hasProblem && auth?.cloudError && <p className={styles.bad}>{auth.cloudError}</p>}
      <p>You sign in on Relay Cloud's own page and come back here.</p>
      <div className={common.actions}>
        <button type="button" className={styles.primary} onClick={() => goToCloudSignIn({ returnTo: backupsPath })}>
          {hasProblem ? 'Reconnect' : 'Connect to cloud'}
        </button>
        <Link to="/settings/account" className={styles.linkButton}>
          Cloud connection settings
        </Link>
      </div>
    </section>
  )
}

/** Without a Pro license the cloud refuses every backup call but the status: explain, and offer nothing that would fail. */
function ProGate({ problem }: { problem: ReactNode }) {
  const headingId = useId()
  const status = useBackupStatus()
  const cloud = useAuthStatus().data?.cloud
  const account = cloud?.email ?? cloud?.name
  return (
    <>
      <PageHeader />
      {problem}
      <section className={styles.gate} aria-labelledby={headingId} data-testid="backups-pro-gate">
        <span className={`${common.badge} ${styles.accentBadge}`}>Pro</span>
        <h2 id={headingId}>Cloud backups need a Pro license</h2>
        <p>
          {account ? (
            <>
              The Relay Cloud account this relay is connected to, <strong>{account}</strong>, has no Pro license.
            </>
          ) : (
            'The Relay Cloud account this relay is connected to has no Pro license.'
          )}
        </p>
        <p>
          With Pro, the relay backs itself up to Relay Cloud on a schedule you choose, and you can restore any backup
          here.
        </p>
        <ul className={styles.benefits}>
          <li>Daily, weekly or monthly backups, each kept for up to {backupLimits.retentionDays.max} days</li>
          <li>
            Up to {backupQuota.maxBackups} backups and {formatBytes(backupQuota.maxTotalBytes)} of storage
          </li>
          <li>Download or restore any backup from this page</li>
        </ul>
        <p>Get Pro for your account on Relay Cloud. This page unlocks as soon as the cloud reports the license.</p>
        <div className={common.actions}>
          {cloud && (
            <a href={cloud.accountUrl} target="_blank" rel="noreferrer" className={styles.linkButton}>
              Get Pro on Relay Cloud
            </a>
          )}
          <button
            type="button"
            className={styles.secondary}
            disabled={status.isFetching}
            onClick={() => void status.refetch()}
          >
            {status.isFetching ? 'Checking…' : 'Check again'}
          </button>
          <Link to="/settings/account" className={styles.linkButton}>
            Cloud account settings
          </Link>
        </div>
      </section>
    </>
  )
}
