import { type AuthMode, authModeLabels, authModes } from '@relay/contracts'
import { useMutation } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { api } from '../api'
import common from '../ui/common.module.css'
import { AuthScreen } from './AuthScreen'
import styles from './AuthScreen.module.css'
import { CloudOutcomeAlert } from './CloudOutcomeAlert'
import { goToCloudSignIn } from './cloud-sign-in'
import { LocalAccountForm } from './LocalAccountForm'
import { modeDescriptions } from './labels'
import { useRefreshAuthStatus } from './use-auth-status'

/** Where a setup with a cloud account lands: the page that shows the new connection. */
const cloudSetupReturnTo = '/settings/account'

/** The first screen of a fresh relay: how people will sign in. */
export function SetupScreen() {
  const [mode, setMode] = useState<AuthMode | null>(null)
  const name = useId()
  return (
    <AuthScreen title="Set up" wide>
      <h1>Set up Relay</h1>
      <p className={styles.lead}>
        Choose how people sign in to this relay. You can change it later under Settings → Account.
      </p>
      <CloudOutcomeAlert />
      <fieldset className={styles.choices}>
        <legend>How should people sign in?</legend>
        {authModes.map((option) => (
          <label key={option} className={styles.choice}>
            <input
              type="radio"
              name={name}
              value={option}
              checked={mode === option}
              // Named by the title alone; the longer text describes it.
              aria-labelledby={`${name}-${option}`}
              aria-describedby={`${name}-${option}-text`}
              onChange={() => setMode(option)}
            />
            <span>
              <span id={`${name}-${option}`} className={styles.choiceTitle}>
                {authModeLabels[option]}
              </span>
              <span id={`${name}-${option}-text`} className={styles.choiceText}>
                {modeDescriptions[option]}
              </span>
            </span>
          </label>
        ))}
      </fieldset>
      {mode === 'none' && <NoSignInStep />}
      {mode === 'local' && (
        <section className={styles.step} aria-label="Create the first account">
          <h2>Create the first account</h2>
          <LocalAccountForm submitLabel="Create account" />
        </section>
      )}
      {mode === 'cloud' && <CloudStep />}
    </AuthScreen>
  )
}

function NoSignInStep() {
  const refreshStatus = useRefreshAuthStatus()
  const choose = useMutation({
    mutationFn: () => api.setAuthMode('none'),
    onSuccess: () => refreshStatus(),
  })
  return (
    <section className={styles.step} aria-label="Continue without sign-in">
      <p className={common.warning}>
        Without sign-in, anyone who can reach this relay over the network can change its settings and read its data.
      </p>
      {choose.isError && (
        <div role="alert" className={common.alert}>
          <strong>Setup did not finish</strong>
          <p>{choose.error.message}</p>
        </div>
      )}
      <div className={common.actions}>
        <button type="button" className={common.primary} disabled={choose.isPending} onClick={() => choose.mutate()}>
          {choose.isPending ? 'Saving…' : 'Continue without sign-in'}
        </button>
      </div>
    </section>
  )
}

function CloudStep() {
  return (
    <section className={styles.step} aria-label="Sign in with Relay Cloud">
      <p className={common.note}>
        You go to the Relay Cloud sign-in page and come back here once you have signed in. The relay then uses that
        account for sign-in and backups.
      </p>
      <div className={common.actions}>
        <button
          type="button"
          className={common.primary}
          onClick={() => goToCloudSignIn({ mode: 'cloud', returnTo: cloudSetupReturnTo })}
        >
          Sign in with Relay Cloud
        </button>
      </div>
    </section>
  )
}
