import type { AuthStatus } from '@relay/contracts'
import common from '../ui/common.module.css'
import { AuthScreen } from './AuthScreen'
import styles from './AuthScreen.module.css'
import { CloudOutcomeAlert } from './CloudOutcomeAlert'
import { currentReturnTo, goToCloudSignIn } from './cloud-sign-in'
import { SignInForm } from './SignInForm'

/** Shown instead of the app when the relay asks for sign-in and this browser has no session. */
export function SignInScreen({ status }: { status: AuthStatus }) {
  return (
    <AuthScreen title="Sign in">
      <h1>Sign in to Relay</h1>
      <CloudOutcomeAlert />
      {status.mode === 'local' && (
        <>
          <p className={styles.lead}>Use the username and password of your account on this relay.</p>
          <SignInForm />
        </>
      )}
      {status.mode === 'cloud' && (
        <>
          <p className={styles.lead}>This relay signs people in with their Relay Cloud account.</p>
          <div className={common.actions}>
            <button
              type="button"
              className={common.primary}
              onClick={() => goToCloudSignIn({ returnTo: currentReturnTo() })}
            >
              Sign in with Relay Cloud
            </button>
          </div>
        </>
      )}
      {status.mode === 'none' && (
        <p className={styles.lead}>The relay did not accept this browser. Reload the page to try again.</p>
      )}
    </AuthScreen>
  )
}
