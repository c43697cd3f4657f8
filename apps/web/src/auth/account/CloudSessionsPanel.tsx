import type { CloudSession } from '@relay/contracts'
import { useMutation, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { toast } from 'sonner'
import { ApiError, api } from '../../api'
import { Badge } from '../../ui/Badge'
import { ConfirmButton } from '../../ui/ConfirmButton'
import common from '../../ui/common.module.css'
import { Panel } from '../../ui/Panel'
import { RelativeTime } from '../../ui/RelativeTime'
import { TableHead } from '../../ui/TableHead'
import styles from '../AccountPage.module.css'
import { cloudSessionsKey, useRefreshAccount } from './use-refresh-account'

/** Every relay signed in to the connected cloud account, each of which can be signed out from here. */
export function CloudSessionsPanel() {
  const sessions = useQuery({
    queryKey: cloudSessionsKey,
    queryFn: ({ signal }) => api.cloudSessions(signal),
  })
  const isNotConnected = sessions.error instanceof ApiError && sessions.error.code === 'CLOUD_NOT_AUTHENTICATED'

  return (
    <Panel
      title="Signed-in relays"
      description="Every relay signed in to this cloud account. Sign out one you no longer use or do not recognise."
    >
      <div className={common.panelBody}>
        {sessions.isPending && (
          <p role="status" className={common.mutedText}>
            Loading sessions…
          </p>
        )}
        {sessions.isError && (
          <div role="alert" className={common.alert}>
            <strong>Could not load the sessions</strong>
            <p>{isNotConnected ? 'The relay is not connected to Relay Cloud.' : sessions.error.message}</p>
          </div>
        )}
        {sessions.data && <SessionTable sessions={sessions.data.sessions} />}
      </div>
    </Panel>
  )
}

function SessionTable({ sessions }: { sessions: readonly CloudSession[] }) {
  if (sessions.length === 0) {
    return <p className={common.mutedText}>No relay is signed in to this account.</p>
  }
  return (
    <div className={styles.tableWrap}>
      <table className={common.cardTable} data-testid="cloud-sessions">
        <TableHead columns={['Session', 'Signed in', 'Expires']} withActions hiddenOnPhone />
        {sessions.map((session) => (
          <SessionRow key={session.id} session={session} />
        ))}
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
  // A tbody each: on a phone each session is a card.
  return (
    <tbody>
      <tr data-testid="cloud-session" data-current={session.current || undefined}>
        <td>
          <span className={common.strong}>{session.current ? 'This relay' : 'Another relay'}</span>
          <code className={styles.sessionId}>{session.id}</code>
        </td>
        <td className={common.nowrap} data-label="Signed in">
          <RelativeTime value={session.createdAt} />
        </td>
        <td className={common.nowrap} data-label="Expires">
          {session.expiresAt ? <RelativeTime value={session.expiresAt} /> : 'Never'}
        </td>
        <td>
          <div className={styles.rowActions}>
            {session.current ? (
              <Badge tone="ok">Current</Badge>
            ) : (
              <ConfirmButton
                label="Sign out"
                question="Sign out?"
                confirmLabel="Yes, sign out"
                pendingLabel="Signing out…"
                isAsking={isAsking}
                onAskingChange={setAsking}
                isPending={revoke.isPending}
                onConfirm={() => revoke.mutate()}
              />
            )}
          </div>
        </td>
      </tr>
    </tbody>
  )
}
