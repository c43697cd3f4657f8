import type { AuthStatus } from '@relay/contracts'
import { useQueryClient } from '@tanstack/react-query'
import { useEffect } from 'react'
import { Outlet } from 'react-router'
import common from '../ui/common.module.css'
import { AuthScreen } from './AuthScreen'
import styles from './AuthScreen.module.css'
import { CloudOutcomeContext, type GateScreen, useCloudOutcomeFromUrl } from './cloud-outcome'
import { SetupScreen } from './SetupScreen'
import { SignInScreen } from './SignInScreen'
import { authStatusKey, useAuthStatus } from './use-auth-status'

/**
 * Above the app: a fresh relay shows setup, a relay that asks for sign-in shows the sign-in screen,
 * and only a browser the relay accepts gets the app (whose pages and notifications poll the API).
 */
export function AuthGate() {
  const status = useAuthStatus()
  const screen = screenOf(status.data)
  const outcome = useCloudOutcomeFromUrl(screen)
  useForgetDataWhen(screen === 'sign-in')

  if (status.data === undefined) {
    return status.isError ? (
      <AuthScreen title="Cannot reach the relay">
        <div role="alert" className={common.alert}>
          <strong>Cannot reach the relay</strong>
          <p>{status.error.message}</p>
        </div>
        <div className={common.actions}>
          <button type="button" className={common.secondary} onClick={() => void status.refetch()}>
            Try again
          </button>
        </div>
      </AuthScreen>
    ) : (
      <p role="status" className={styles.loading} data-testid="auth-loading">
        Loading Relay…
      </p>
    )
  }
  return (
    <CloudOutcomeContext value={outcome}>
      {screen === 'setup' && <SetupScreen />}
      {screen === 'sign-in' && <SignInScreen status={status.data} />}
      {screen === 'app' && <Outlet />}
    </CloudOutcomeContext>
  )
}

function screenOf(status: AuthStatus | undefined): GateScreen {
  if (!status) {
    return null
  }
  if (status.setupRequired) {
    return 'setup'
  }
  return status.isAuthenticated ? 'app' : 'sign-in'
}

/** A signed-out browser keeps nothing of what the last user saw. */
function useForgetDataWhen(isSignedOut: boolean) {
  const queryClient = useQueryClient()
  useEffect(() => {
    if (isSignedOut) {
      queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== authStatusKey[0] })
    }
  }, [isSignedOut, queryClient])
}
