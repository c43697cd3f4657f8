import type { AuthStatus, CloudConnection } from '@relay/contracts'
import { useMutation } from '@tanstack/react-query'
import { useState } from 'react'
import { api } from '../../api'
import { Badge } from '../../ui/Badge'
import common from '../../ui/common.module.css'
import { Fact } from '../../ui/Fact'
import { Panel } from '../../ui/Panel'
import { RelativeTime } from '../../ui/RelativeTime'
import styles from '../AccountPage.module.css'
import { goToCloudSignIn } from '../cloud-sign-in'
import { accountPath, useRefreshAccount } from './use-refresh-account'

type ActionResult = { ok: boolean; message: string }

/** The relay's connection to Relay Cloud: its account, license and token, with connect and disconnect. */
export function CloudPanel({ status }: { status: AuthStatus }) {
  const refreshAccount = useRefreshAccount()
  const [result, setResult] = useState<ActionResult | null>(null)
  const { cloud } = status

  const forceRefresh = useMutation({
    mutationFn: () => api.forceTokenRefresh(),
    onMutate: () => setResult(null),
    onSuccess: async (reply) => {
      setResult({ ok: reply.success, message: reply.message })
      await refreshAccount()
    },
    onError: (error) => setResult({ ok: false, message: error.message }),
  })
  const disconnect = useMutation({
    mutationFn: () => api.disconnectCloud(),
    onMutate: () => setResult(null),
    onSuccess: async () => {
      setResult({ ok: true, message: 'Disconnected from Relay Cloud.' })
      await refreshAccount()
    },
    onError: (error) => setResult({ ok: false, message: error.message }),
  })
  const isBusy = forceRefresh.isPending || disconnect.isPending

  return (
    <Panel title="Relay Cloud" description="Cloud backups and cloud sign-in go through this connection.">
      <div className={common.panelBody}>
        <dl className={styles.facts}>
          <Fact label="Connection" testId="cloud-connection">
            <ConnectionBadge status={status} />
            {cloud && !status.backendAuthenticated && status.cloudError && (
              <span className={styles.bad} data-testid="cloud-error">
                {status.cloudError}
              </span>
            )}
          </Fact>
          {cloud && <CloudFacts cloud={cloud} hasValidLicense={status.hasValidLicense} />}
        </dl>
        {!cloud && (
          <p className={common.note}>
            Connect to back up this relay to Relay Cloud. You sign in on the cloud's page and come back here.
          </p>
        )}
        <div className={common.actions}>
          {!status.backendAuthenticated && (
            <button type="button" className={common.primary} onClick={() => goToCloudSignIn({ returnTo: accountPath })}>
              {cloud ? 'Reconnect' : 'Connect to cloud'}
            </button>
          )}
          {cloud && (
            <>
              <button
                type="button"
                className={common.secondary}
                disabled={isBusy}
                onClick={() => forceRefresh.mutate()}
              >
                {forceRefresh.isPending ? 'Refreshing…' : 'Force refresh'}
              </button>
              <button
                type="button"
                className={common.dangerSecondary}
                disabled={isBusy}
                onClick={() => disconnect.mutate()}
              >
                {disconnect.isPending ? 'Disconnecting…' : 'Disconnect'}
              </button>
            </>
          )}
          <p
            role="status"
            className={result?.ok === false ? styles.resultBad : styles.resultGood}
            data-testid="cloud-action-result"
          >
            {result?.message}
          </p>
        </div>
        {cloud && status.mode === 'cloud' && (
          <p className={styles.hint}>
            This relay signs people in with Relay Cloud: after disconnecting, nobody can sign in with the cloud until it
            is connected again.
          </p>
        )}
      </div>
    </Panel>
  )
}

const connectionBadges = {
  connected: { label: 'Connected', tone: 'ok' },
  problem: { label: 'Connection problem', tone: 'warn' },
  none: { label: 'Not connected', tone: 'muted' },
} as const

function ConnectionBadge({ status }: { status: AuthStatus }) {
  const state = status.backendAuthenticated ? 'connected' : status.cloud ? 'problem' : 'none'
  const badge = connectionBadges[state]
  return (
    <Badge tone={badge.tone} state={state}>
      {badge.label}
    </Badge>
  )
}

function CloudFacts({ cloud, hasValidLicense }: { cloud: CloudConnection; hasValidLicense: boolean | null }) {
  return (
    <>
      <Fact label="Cloud account" testId="cloud-account">
        {cloud.name && <span className={common.strong}>{cloud.name}</span>}
        {cloud.email && <span className={cloud.name ? styles.sub : undefined}>{cloud.email}</span>}
        {!cloud.name && !cloud.email && <code className={styles.code}>{cloud.userId}</code>}
      </Fact>
      <Fact label="Pro license" testId="cloud-license">
        {hasValidLicense === null ? (
          <span className={common.mutedText}>Unknown: the cloud could not be asked</span>
        ) : hasValidLicense ? (
          <span className={styles.good}>Valid</span>
        ) : (
          <span>None</span>
        )}
      </Fact>
      <Fact label="Access token" testId="cloud-token">
        {cloud.accessTokenExpiresAt ? (
          <span>
            {new Date(cloud.accessTokenExpiresAt) > new Date() ? 'Expires ' : 'Expired '}
            <RelativeTime value={cloud.accessTokenExpiresAt} />
          </span>
        ) : (
          <span className={common.mutedText}>None yet: the relay gets one when it next calls the cloud</span>
        )}
      </Fact>
      <Fact label="Connected">
        <RelativeTime value={cloud.connectedAt} />
      </Fact>
      <Fact label="On Relay Cloud">
        <a href={cloud.accountUrl} target="_blank" rel="noreferrer" data-testid="cloud-account-page">
          Manage your account and Pro license
        </a>
      </Fact>
    </>
  )
}
