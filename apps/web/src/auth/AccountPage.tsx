import styles from './AccountPage.module.css'
import { CloudPanel } from './account/CloudPanel'
import { CloudSessionsPanel } from './account/CloudSessionsPanel'
import { SignInPanel } from './account/SignInPanel'
import { useAuthStatus } from './use-auth-status'

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
