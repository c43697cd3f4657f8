import type { UseQueryResult } from '@tanstack/react-query'
import { type ReactNode, useState } from 'react'
import common from './common.module.css'
import section from './Section.module.css'

/**
 * Which item a list's form is open for: a new one, an existing one, or none. `startNew` opens the
 * new form at once, for a link that leads straight to it.
 */
export function useEditor<T extends { id: string }>(startNew = false) {
  const [editing, setEditing] = useState<T | 'new' | null>(startNew ? 'new' : null)
  return {
    isOpen: editing !== null,
    isNew: editing === 'new',
    /** The item being edited; undefined while creating one. */
    item: editing === 'new' || editing === null ? undefined : editing,
    /** A new form for each item, so a draft never carries over to another. */
    key: editing === 'new' ? 'new' : editing?.id,
    openNew: () => setEditing('new'),
    edit: (item: T) => setEditing(item),
    close: () => setEditing(null),
  }
}

/**
 * A list of things the user manages: its title and description with the create button, the open
 * form, then the list with its loading, failure and empty states.
 */
export function ListSection<T>(props: {
  title: string
  description: string
  addLabel: string
  /** Hidden while the create form is open. */
  onAdd?: () => void
  form?: ReactNode
  query: UseQueryResult<T[]>
  /** The list's name in its loading and failure messages ("collectors"). */
  what: string
  /** What the empty list says, and what to do about it. */
  empty: string
  children: (list: T[]) => ReactNode
}) {
  return (
    <>
      <div className={section.header}>
        <div>
          <h2 className={section.title}>{props.title}</h2>
          <p className={common.mutedText}>{props.description}</p>
        </div>
        {props.onAdd && (
          <button type="button" className={common.primary} onClick={props.onAdd}>
            {props.addLabel}
          </button>
        )}
      </div>
      {props.form}
      <ListState query={props.query} what={props.what} empty={props.empty}>
        {props.children}
      </ListState>
    </>
  )
}

function ListState<T>(props: {
  query: UseQueryResult<T[]>
  what: string
  empty: string
  children: (list: T[]) => ReactNode
}) {
  const { query } = props
  if (query.isPending) {
    return (
      <p role="status" className={common.mutedText}>
        Loading {props.what}…
      </p>
    )
  }
  if (!query.data) {
    return (
      <div role="alert" className={section.alert}>
        <strong>Could not load the {props.what}</strong>
        <p>{query.error?.message}</p>
        <button type="button" className={common.secondary} onClick={() => void query.refetch()}>
          Try again
        </button>
      </div>
    )
  }
  if (query.data.length === 0) {
    return <p className={common.empty}>{props.empty}</p>
  }
  return props.children(query.data)
}
