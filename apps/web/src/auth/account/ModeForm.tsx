import { type AuthMode, type AuthStatus, authModeLabels, authModes } from '@relay/contracts'
import { useMutation } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { api } from '../../api'
import common from '../../ui/common.module.css'
import form from '../../ui/form.module.css'
import styles from '../AccountPage.module.css'
import { goToCloudSignIn } from '../cloud-sign-in'
import { LocalAccountForm } from '../LocalAccountForm'
import { modeDescriptions } from '../labels'
import { useRefreshAuthStatus } from '../use-auth-status'
import { accountPath } from './use-refresh-account'

/** Picks another sign-in mode, then shows what switching to it takes. */
export function ModeForm({ status }: { status: AuthStatus }) {
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
    <div className={common.panelBody}>
      <fieldset className={styles.choices}>
        <legend className={form.legend}>Change sign-in mode</legend>
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
              <span id={`${name}-${mode}`} className={form.choiceTitle}>
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
        <div role="alert" className={common.alert} data-testid="mode-error">
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
        <p className={common.note}>Local accounts needs a first account. Create it here; you stay signed in with it.</p>
        <LocalAccountForm submitLabel="Create account and switch" />
      </div>
    )
  }
  if (picked === 'cloud' && status.cloud === null) {
    return (
      <div className={styles.step}>
        <p className={common.note}>
          Sign in with your Relay Cloud account first; the relay switches to cloud sign-in when you come back.
        </p>
        <div className={common.actions}>
          <button
            type="button"
            className={common.primary}
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
      {asksForSignIn && <p className={common.note}>This browser will have to sign in again after the switch.</p>}
      {picked === 'none' && (
        <p className={common.warning}>Anyone who can reach this relay will be able to use it without signing in.</p>
      )}
      <div className={common.actions}>
        <button type="button" className={common.primary} disabled={props.isPending} onClick={props.onSwitch}>
          {props.isPending ? 'Switching…' : `Switch to ${authModeLabels[picked].toLowerCase()}`}
        </button>
      </div>
    </div>
  )
}
