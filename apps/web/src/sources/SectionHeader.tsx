import type { UseQueryResult } from '@tanstack/react-query'
import type { ReactNode } from 'react'
import styles from './SourcesPage.module.css'

/** A section's title and description, with its create button. */
export function SectionHeader(props: {
  title: string
  description: string
  actionLabel: string
  onAction?: () => void
}) {
  return (
    <div className={styles.sectionHeader}>
      <div>
        <h2 className={styles.sectionTitle}>{props.title}</h2>
        <p className={styles.muted}>{props.description}</p>
      </div>
      {props.onAction && (
        <button type="button" className={styles.primary} onClick={props.onAction}>
          {props.actionLabel}
        </button>
      )}
    </div>
  )
}

/** A list's loading, failure and empty states; `children` renders the list once there is one. */
export function ListState<T>(props: {
  query: UseQueryResult<T[]>
  what: string
  empty: string
  children: (list: T[]) => ReactNode
}) {
  const { query } = props
  if (query.isPending) {
    return (
      <p role="status" className={styles.muted}>
        Loading {props.what}…
      </p>
    )
  }
  if (!query.data) {
    return (
      <div role="alert" className={styles.alert}>
        <strong>Could not load the {props.what}</strong>
        <p>{query.error?.message}</p>
        <button type="button" className={styles.secondary} onClick={() => void query.refetch()}>
          Try again
        </button>
      </div>
    )
  }
  if (query.data.length === 0) {
    return <p className={styles.empty}>{props.empty}</p>
  }
  return props.children(query.data)
}
