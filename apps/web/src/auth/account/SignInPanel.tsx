import { type AuthStatus, authModeLabels } from '@relay/contracts'
import common from '../../ui/common.module.css'
import { Fact } from '../../ui/Fact'
import { Panel } from '../../ui/Panel'
import styles from '../AccountPage.module.css'
import { userKindLabels } from '../labels'
import { useSignOut } from '../use-sign-out'
import { ModeForm } from './ModeForm'

/** How people sign in, who is signed in here, and the form that changes the sign-in mode. */
export function SignInPanel({ status }: { status: AuthStatus }) {
  const signOut = useSignOut()
  const { user } = status
  return (
    <Panel title="Sign-in" description="How people sign in to this relay, and who is signed in in this browser.">
      <div className={common.panelBody}>
        <dl className={styles.facts}>
          <Fact label="Sign-in mode" testId="account-mode">
            {authModeLabels[status.mode]}
          </Fact>
          <Fact label="Signed in as" testId="account-user">
            {user ? (
              <>
                <span className={common.strong}>{user.name}</span>
                <span className={styles.sub}>
                  {userKindLabels[user.kind]}
                  {user.email && user.email !== user.name ? ` · ${user.email}` : ''}
                </span>
              </>
            ) : (
              <span className={common.mutedText}>Nobody (no sign-in needed)</span>
            )}
          </Fact>
        </dl>
        {user && (
          <div className={common.actions}>
            <button
              type="button"
              className={common.secondary}
              disabled={signOut.isPending}
              onClick={() => signOut.mutate()}
            >
              {signOut.isPending ? 'Signing out…' : 'Sign out'}
            </button>
          </div>
        )}
      </div>
      <ModeForm status={status} />
    </Panel>
  )
}
