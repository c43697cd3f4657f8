import { useState } from 'react'
import styles from './SourcesPage.module.css'

/** Delete in two steps: the first click asks, the second deletes. */
export function DeleteButton({
  name,
  isPending,
  onDelete,
}: {
  name: string
  isPending: boolean
  onDelete: () => void
}) {
  const [isAsking, setAsking] = useState(false)
  if (!isAsking) {
    return (
      <button
        type="button"
        className={styles.dangerButton}
        onClick={() => setAsking(true)}
        aria-label={`Delete ${name}`}
      >
        Delete
      </button>
    )
  }
  return (
    <span className={styles.confirm}>
      <span className={styles.confirmText}>Delete?</span>
      <button
        type="button"
        className={styles.dangerSolid}
        disabled={isPending}
        onClick={onDelete}
        aria-label={`Yes, delete ${name}`}
      >
        {isPending ? 'Deleting…' : 'Yes, delete'}
      </button>
      <button type="button" className={styles.smallButton} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  )
}
