import { useContext } from 'react'
import styles from './CloudOutcomeAlert.module.css'
import { CloudOutcomeContext } from './cloud-outcome'
import { outcomeMessages } from './cloud-sign-in'

/** The message for the cloud sign-in the browser just came back from, if any. */
export function CloudOutcomeAlert() {
  const { outcome, dismiss } = useContext(CloudOutcomeContext)
  if (!outcome) {
    return null
  }
  const message = outcomeMessages[outcome]
  const isSuccess = outcome === 'connected'
  return (
    <div
      role={isSuccess ? 'status' : 'alert'}
      className={isSuccess ? styles.success : styles.alert}
      data-testid="cloud-outcome"
      data-outcome={outcome}
    >
      <div>
        <strong>{message.title}</strong>
        <p>{message.text}</p>
      </div>
      <button type="button" className={styles.dismiss} onClick={dismiss} aria-label="Dismiss message">
        ×
      </button>
    </div>
  )
}
