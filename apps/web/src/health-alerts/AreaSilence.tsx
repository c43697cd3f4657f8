import type { HealthArea, Silence } from '@relay/contracts'
import { useId, useRef, useState } from 'react'
import { api } from '../api'
import common from '../ui/common.module.css'
import { AlertForm } from './AlertForm'
import styles from './HealthAlerts.module.css'
import { alertFailure, silencedText } from './health-alerts'
import { useAlertChange } from './queries'

/**
 * Silencing a whole area from its card: the silence in force with the button that ends it, or the
 * button that opens the form.
 */
export function AreaSilence({ area, silence }: { area: HealthArea; silence: Silence | undefined }) {
  const [isOpen, setOpen] = useState(false)
  const formId = useId()
  const opener = useRef<HTMLButtonElement>(null)
  const end = useAlertChange((id: string) => api.unsilence(id))
  const subject = `all ${area.toLowerCase()}`

  if (silence) {
    return (
      <div className={`${styles.marks} ${styles.areaSilence}`} data-wide>
        <p className={styles.mark} data-testid={`area-silence-${area.toLowerCase()}`}>
          <span>{silencedText(silence)}</span>
          <button
            type="button"
            className={styles.button}
            disabled={end.isPending}
            onClick={() => end.mutate(silence.id)}
          >
            End silence of {subject}
          </button>
        </p>
        {end.error && (
          <p role="alert" className={styles.error}>
            {alertFailure(end.error, 'end')}
          </p>
        )}
      </div>
    )
  }
  return (
    <div className={`${styles.marks} ${styles.areaSilence}`} data-wide={isOpen || undefined}>
      <button
        ref={opener}
        type="button"
        className={styles.areaButton}
        aria-expanded={isOpen}
        aria-controls={isOpen ? formId : undefined}
        onClick={() => setOpen(!isOpen)}
      >
        {/* Short on the card, whole for screen readers: "Silence all collectors…". */}
        Silence<span className={common.visuallyHidden}> {subject}</span>…
      </button>
      {isOpen && (
        <div id={formId}>
          <AlertForm
            kind="silence"
            target={{ area }}
            subject={subject}
            onDone={() => {
              setOpen(false)
              opener.current?.focus()
            }}
          />
        </div>
      )}
    </div>
  )
}
