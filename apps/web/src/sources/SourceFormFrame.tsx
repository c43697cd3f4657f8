import type { FormEvent, ReactNode } from 'react'
import common from '../ui/common.module.css'
import { InputField } from '../ui/Field'
import { FormAlert } from '../ui/FormAlert'
import styles from './SourcesPage.module.css'

/** A create or edit form of the Sources page: its title, its fields, the errors of no field, and its buttons. */
export function SourceFormFrame(props: {
  kind: 'collector' | 'stream' | 'junction'
  /** The name of the item being edited; undefined while creating one. */
  editing: string | undefined
  isSaving: boolean
  formErrors: readonly string[]
  onSubmit: (event: FormEvent) => void
  onCancel: () => void
  children: ReactNode
}) {
  const { kind, editing } = props
  const isNew = editing === undefined
  return (
    <form
      className={styles.formPanel}
      noValidate
      onSubmit={props.onSubmit}
      aria-label={`${isNew ? 'New' : 'Edit'} ${kind}`}
    >
      <h3 className={styles.formTitle}>{isNew ? `New ${kind}` : `Edit ${editing}`}</h3>
      <div className={styles.fields}>{props.children}</div>
      <FormAlert title="Not saved" messages={props.formErrors} className={styles.formAlert} />
      <div className={styles.formActions}>
        <button type="submit" className={common.primary} disabled={props.isSaving}>
          {props.isSaving ? 'Saving…' : `${isNew ? 'Create' : 'Save'} ${kind}`}
        </button>
        <button type="button" className={common.secondary} onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

/** The name every source has; it takes the focus, since the form opens on a click that asks to fill it in. */
export function NameField(props: { value: string; error: string | undefined; onChange: (name: string) => void }) {
  return (
    <InputField
      label="Name"
      error={props.error}
      value={props.value}
      maxLength={100}
      // The form opens on a click that asks to fill it in.
      autoFocus
      onChange={props.onChange}
    />
  )
}
