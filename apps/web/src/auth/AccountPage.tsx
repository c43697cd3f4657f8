import {
  type AuthMode,
  type AuthStatus,
  authModeLabels,
  authModes,
  type CloudConnection,
  type CloudSession,
} from '@relay/contracts'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type ReactNode, useId, useState } from 'react'
import { toast } from 'sonner'
import { ApiError, api } from '../api'
import { RelativeTime } from '../ui/RelativeTime'
import styles from './AccountPage.module.css'
import { goToCloudSignIn } from './cloud-sign-in'
import { LocalAccountForm } from './LocalAccountForm'
import { modeDescriptions, userKindLabels } from './labels'
import { useAuthStatus, useRefreshAuthStatus } from './use-auth-status'
import { useSignOut } from './use-sign-out'

const accountPath = '/settings/account'
const cloudSessionsKey = ['cloud-sessions'] as const

/** Who is signed in, how the relay signs people in, and its connection to Relay Cloud. */
export function AccountPage() {
  const status = useAuthStatus()
  return (
    <>
      <title>Account · Settings · Relay</title>
      {status.data && (
        <div className={styles.panels}>
          <SignInPanel status={status.data} />
          <CloudPanel status={status.data} />
          {status.data.cloud && <CloudSessionsPanel />}
        </div>
      )}
    </>
  )
}

/** Reads the status and the cloud sessions again after an action changed them. */
function useRefreshAccount() {
  const queryClient = useQueryClient()
  const refreshStatus = useRefreshAuthStatus()
  return () => Promise.all([refreshStatus(), queryClient.invalidateQueries({ queryKey: cloudSessionsKey })])
}

function SignInPanel({ status }: { status: AuthStatus }) {
  const headingId = useId()
  const signOut = useSignOut()
  const { user } = status
  return (
    <section className={styles.panel} aria-labelledby={headingId}>
      <header className={styles.panelHeader}>
        <h2 id={headingId}>Sign-in</h2>
        <p className={styles.muted}>How people sign in to this relay, and who is signed in in this browser.</p>
      </header>
      <div className={styles.body}>
        <dl className={styles.facts}>
          <Fact label="Sign-in mode" testId="account-mode">
            {authModeLabels[status.mode]}
          </Fact>
          <Fact label="Signed in as" testId="account-user">
            {user ? (
              <>
                <span className={styles.strong}>{user.name}</span>
                <span className={styles.sub}>
                  {userKindLabels[user.kind]}
                  {user.email && user.email !== user.name ? ` · ${user.email}` : ''}
                </span>
              </>
            ) : (
              <span className={styles.mutedText}>Nobody (no sign-in needed)</span>
            )}
          </Fact>
        </dl>
        {user && (
          <div className={styles.actions}>
            <button
              type="button"
              className={styles.secondary}
              disabled={signOut.isPending}
              onClick={() => signOut.mutate()}
            >
              {signOut.isPending ? 'Signing out…' : 'Sign out'}
            </button>
          </div>
        )}
      </div>
      <ModeForm status={status} />
    </section>
  )
}

function ModeForm({ status }: { status: AuthStatus }) {
  const refreshStatus = useRefreshAuthStatus()
  const [picked, setPicked] = useState<AuthMode>(status.mode)
  const name = useId()
  const change = useMutation({
    mutationFn: (mode: AuthMode) => api.setAuthMode(mode),
    // A refusal usually means this page was behind (another tab disconnected the cloud): catch up.
    onSettled: () => refreshStatus(),
  })
  const pick = (mode: AuthMode) => {
    setPicked(mode)
    change.reset()
  }

  return (
    <div className={styles.body}>
      <fieldset className={styles.choices}>
        <legend>Change sign-in mode</legend>
        {authModes.map((mode) => (
          <label key={mode} className={styles.choice}>
            <input
              type="radio"
              name={name}
              value={mode}
              checked={picked === mode}
              // Named by the title alone; the longer text describes it.
              aria-labelledby={`${name}-${mode}`}
              aria-describedby={`${name}-${mode}-text`}
              onChange={() => pick(mode)}
            />
            <span>
              <span id={`${name}-${mode}`} className={styles.choiceTitle}>
                {authModeLabels[mode]}
                {mode === status.mode && <span className={styles.current}> (current)</span>}
              </span>
              <span id={`${name}-${mode}-text`} className={styles.choiceText}>
                {modeDescriptions[mode]}
              </span>
            </span>
          </label>
        ))}
      </fieldset>
      <ModeStep status={status} picked={picked} isPending={change.isPending} onSwitch={() => change.mutate(picked)} />
      {change.isError && (
        <div role="alert" className={styles.alert} data-testid="mode-error">
          <strong>The mode was not changed</strong>
          <p>{change.error.message}</p>
        </div>
      )}
    </div>
  )
}

/** What switching to the picked mode takes: nothing, a first local account, or a cloud sign-in. */
function ModeStep(props: { status: AuthStatus; picked: AuthMode; isPending: boolean; onSwitch: () => void }) {
  const { status, picked } = props
  if (picked === status.mode) {
    return null
  }
  if (picked === 'local' && !status.hasLocalUsers) {
    return (
      <div className={styles.step}>
        <p className={styles.note}>Local accounts needs a first account. Create it here; you stay signed in with it.</p>
        <LocalAccountForm submitLabel="Create account and switch" />
      </div>
    )
  }
  if (picked === 'cloud' && status.cloud === null) {
    return (
      <div className={styles.step}>
        <p className={styles.note}>
          Sign in with your Relay Cloud account first; the relay switches to cloud sign-in when you come back.
        </p>
        <div className={styles.actions}>
          <button
            type="button"
            className={styles.primary}
            onClick={() => goToCloudSignIn({ mode: 'cloud', returnTo: accountPath })}
          >
            Sign in with Relay Cloud
          </button>
        </div>
      </div>
    )
  }
  const asksForSignIn = picked !== 'none' && status.user?.kind !== picked
  return (
    <div className={styles.step}>
      {asksForSignIn && <p className={styles.note}>This browser will have to sign in again after the switch.</p>}
      {picked === 'none' && (
        <p className={styles.warning}>Anyone who can reach this relay will be able to use it without signing in.</p>
      )}
      <div className={styles.actions}>
        <button type="button" className={styles.primary} disabled={props.isPending} onClick={props.onSwitch}>
          {props.isPending ? 'Switching…' : `Switch to ${authModeLabels[picked].toLowerCase()}`}
        </button>
      </div>
    </div>
  )
}

type ActionResult = { ok: boolean; message: string }

function CloudPanel({ status }: { status: AuthStatus }) {
  const headingId = useId()
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
    <section className={styles.panel} aria-labelledby={headingId}>
      <header className={styles.panelHeader}>
        <h2 id={headingId}>Relay Cloud</h2>
        <p className={styles.muted}>Cloud backups and cloud sign-in go through this connection.</p>
      </header>
      <div className={styles.body}>
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
          <p className={styles.note}>
            Connect to back up this relay to Relay Cloud. You sign in on the cloud's page and come back here.
          </p>
        )}
        <div className={styles.actions}>
          {!status.backendAuthenticated && (
            <button type="button" className={styles.primary} onClick={() => goToCloudSignIn({ returnTo: accountPath })}>
              {cloud ? 'Reconnect' : 'Connect to cloud'}
            </button>
          )}
          {cloud && (
            <>
              <button
                type="button"
                className={styles.secondary}
                disabled={isBusy}
                onClick={() => forceRefresh.mutate()}
              >
                {forceRefresh.isPending ? 'Refreshing…' : 'Force refresh'}
              </button>
              <button
                type="button"
                className={styles.dangerButton}
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
    </section>
  )
}

const connectionBadges = {
  connected: { label: 'Connected', className: styles.ok },
  problem: { label: 'Connection problem', className: styles.warn },
  none: { label: 'Not connected', className: styles.mutedBadge },
} satisfies Record<string, { label: string; className: string | undefined }>

function ConnectionBadge({ status }: { status: AuthStatus }) {
  const state = status.backendAuthenticated ? 'connected' : status.cloud ? 'problem' : 'none'
  const badge = connectionBadges[state]
  return (
    <span className={`${styles.badge} ${badge.className}`} data-state={state}>
      {badge.label}
    </span>
  )
}

function CloudFacts({ cloud, hasValidLicense }: { cloud: CloudConnection; hasValidLicense: boolean | null }) {
  return (
    <>
      <Fact label="Cloud account" testId="cloud-account">
        {cloud.name && <span className={styles.strong}>{cloud.name}</span>}
        {cloud.email && <span className={cloud.name ? styles.sub : undefined}>{cloud.email}</span>}
        {!cloud.name && !cloud.email && <code className={styles.code}>{cloud.userId}</code>}
      </Fact>
      <Fact label="Pro license" testId="cloud-license">
        {hasValidLicense === null ? (
          <span className={styles.mutedText}>Unknown: the cloud could not be asked</span>
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
          <span className={styles.mutedText}>None yet: the relay gets one when it next calls the cloud</span>
        )}
      </Fact>
      <Fact label="Connected">
        <RelativeTime value={cloud.connectedAt} />
      </Fact>
    </>
  )
}

function CloudSessionsPanel() {
  const headingId = useId()
  const sessions = useQuery({
    queryKey: cloudSessionsKey,
    queryFn: ({ signal }) => api.cloudSessions(signal),
  })
  const isNotConnected = sessions.error instanceof ApiError && sessions.error.code === 'CLOUD_NOT_AUTHENTICATED'

  return (
    <section className={styles.panel} aria-labelledby={headingId}>
      <header className={styles.panelHeader}>
        <h2 id={headingId}>Signed-in relays</h2>
        <p className={styles.muted}>
          Every relay signed in to this cloud account. Sign out one you no longer use or do not recognise.
        </p>
      </header>
      <div className={styles.body}>
        {sessions.isPending && (
          <p role="status" className={styles.mutedText}>
            Loading sessions…
          </p>
        )}
        {sessions.isError && (
          <div role="alert" className={styles.alert}>
            <strong>Could not load the sessions</strong>
            <p>{isNotConnected ? 'The relay is not connected to Relay Cloud.' : sessions.error.message}</p>
          </div>
        )}
        {sessions.data && <SessionTable sessions={sessions.data.sessions} />}
      </div>
    </section>
  )
}

function SessionTable({ sessions }: { sessions: readonly CloudSession[] }) {
  if (sessions.length === 0) {
    return <p className={styles.mutedText}>No relay is signed in to this account.</p>
  }
  return (
    <div className={styles.tableWrap}>
      <table className={styles.table} data-testid="cloud-sessions">
        <thead>
          <tr>
            <th scope="col">Session</th>
            <th scope="col">Signed in</th>
            <th scope="col">Expires</th>
            <th scope="col">
              <span className={styles.visuallyHidden}>Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((session) => (
            <SessionRow key={session.id} session={session} />
          ))}
        </tbody>
      </table>
    </div>
  )
}

function SessionRow({ session }: { session: CloudSession }) {
  const refreshAccount = useRefreshAccount()
  const [isAsking, setAsking] = useState(false)
  const revoke = useMutation({
    mutationFn: () => api.revokeCloudSession(session.id),
    onSuccess: async () => {
      toast.success('Signed out the relay session')
      await refreshAccount()
    },
    onError: (error) => {
      setAsking(false)
      toast.error('Could not sign out the session', { description: error.message })
    },
  })
  return (
    <tr data-testid="cloud-session" data-current={session.current || undefined}>
      <td>
        <span className={styles.strong}>{session.current ? 'This relay' : 'Another relay'}</span>
        <code className={styles.sessionId}>{session.id}</code>
      </td>
      <td className={styles.nowrap}>
        <RelativeTime value={session.createdAt} />
      </td>
      <td className={styles.nowrap}>{session.expiresAt ? <RelativeTime value={session.expiresAt} /> : 'Never'}</td>
      <td>
        <div className={styles.rowActions}>
          {session.current ? (
            <span className={`${styles.badge} ${styles.ok}`}>Current</span>
          ) : isAsking ? (
            <span className={styles.confirm}>
              <span className={styles.confirmText}>Sign out?</span>
              <button
                type="button"
                className={styles.dangerSolid}
                disabled={revoke.isPending}
                onClick={() => revoke.mutate()}
              >
                {revoke.isPending ? 'Signing out…' : 'Yes, sign out'}
              </button>
              <button type="button" className={styles.smallButton} onClick={() => setAsking(false)}>
                Cancel
              </button>
            </span>
          ) : (
            <button type="button" className={styles.smallDanger} onClick={() => setAsking(true)}>
              Sign out
            </button>
          )}
        </div>
      </td>
    </tr>
  )
}

function Fact({ label, testId, children }: { label: string; testId?: string; children: ReactNode }) {
  return (
    <div className={styles.fact}>
      <dt>{label}</dt>
      <dd data-testid={testId}>{children}</dd>
    </div>
  )
}
