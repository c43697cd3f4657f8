import type { AcknowledgedMark, SilencedMark } from '@relay/contracts'
import { api } from '../api'
import common from '../ui/common.module.css'
import styles from './HealthAlerts.module.css'
import { acknowledgedText, alertFailure, silenceCovering, silencedText } from './health-alerts'
import { useAlertChange } from './queries'

type Marks = { acknowledged?: AcknowledgedMark; silenced?: SilencedMark }

/** The marks of an item as text, for a list that only shows them (the Sources rows). */
export function AlertNotes({ acknowledged, silenced }: Marks) {
  if (!acknowledged && !silenced) {
    return null
  }
  return (
    <span className={styles.marks}>
      {silenced && (
        <span className={styles.mark} data-testid="silenced-note">
          {silencedText(silenced)}
        </span>
      )}
      {acknowledged && (
        <span className={styles.mark} data-testid="acknowledged-note">
          {acknowledgedText(acknowledged)}
        </span>
      )}
    </span>
  )
}

/**
 * The marks of a warning, each with the button that takes it back: "Undo" an acknowledgement, "End
 * silence". A silence of the whole area ends for the whole area, and its button says so.
 */
export function AlertMarks({
  item,
  subject,
  acknowledged,
  silenced,
  silenceIsAreaWide,
}: Marks & { item: string; subject: string; silenceIsAreaWide: boolean }) {
  const undo = useAlertChange(() => api.unacknowledge(item))
  const end = useAlertChange(async () => {
    // The mark names no silence; the list says which one is in force, the item's own before its area's.
    const silence = silenceCovering(await api.silences(), item)
    if (silence) {
      await api.unsilence(silence.id)
    }
  })
  if (!acknowledged && !silenced) {
    return null
  }
  const failure = undo.error ? alertFailure(undo.error, 'undo') : end.error ? alertFailure(end.error, 'end') : null
  return (
    <div className={styles.marks}>
      {silenced && (
        <p className={styles.mark} data-testid="silenced-mark">
          <span>{silencedText(silenced)}</span>
          <button type="button" className={styles.button} disabled={end.isPending} onClick={() => end.mutate()}>
            {silenceIsAreaWide ? 'End area silence' : 'End silence'}
            <span className={common.visuallyHidden}> of {subject}</span>
          </button>
        </p>
      )}
      {acknowledged && (
        <p className={styles.mark} data-testid="acknowledged-mark">
          <span>{acknowledgedText(acknowledged)}</span>
          <button type="button" className={styles.button} disabled={undo.isPending} onClick={() => undo.mutate()}>
            Undo<span className={common.visuallyHidden}> acknowledgement of {subject}</span>
          </button>
        </p>
      )}
      {failure && (
        <p role="alert" className={styles.error}>
          {failure}
        </p>
      )}
    </div>
  )
}

/** A row's classes with the greyed look added while its item is silenced. */
export function rowClassOf(marks: Marks, ...others: (string | false | undefined)[]): string | undefined {
  return [...others, marks.silenced && styles.silenced].filter(Boolean).join(' ') || undefined
}
