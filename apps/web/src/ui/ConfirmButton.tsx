import type { ReactNode } from 'react'
import common from './common.module.css'

/**
 * A row's irreversible action in two steps: the first click asks, the second acts. The caller holds
 * whether it asks, so it can stop asking when the action fails. `children` stand beside the first
 * button and make room for the question.
 */
export function ConfirmButton(props: {
  label: string
  question: string
  confirmLabel: string
  pendingLabel: string
  /** What the action is about, for the buttons' accessible names ("Delete Bench sensors"). */
  subject?: string
  isAsking: boolean
  onAskingChange: (isAsking: boolean) => void
  isPending: boolean
  onConfirm: () => void
  /** More classes for the question and its buttons. */
  className?: string
  children?: ReactNode
}) {
  const named = (text: string) => (props.subject ? `${text} ${props.subject}` : undefined)
  if (!props.isAsking) {
    return (
      <>
        {props.children}
        <button
          type="button"
          className={common.smallDanger}
          onClick={() => props.onAskingChange(true)}
          aria-label={named(props.label)}
        >
          {props.label}
        </button>
      </>
    )
  }
  return (
    <span className={props.className ? `${common.confirm} ${props.className}` : common.confirm}>
      <span className={common.confirmText}>{props.question}</span>
      <button
        type="button"
        className={common.dangerSolid}
        disabled={props.isPending}
        onClick={props.onConfirm}
        aria-label={named(props.confirmLabel)}
      >
        {props.isPending ? props.pendingLabel : props.confirmLabel}
      </button>
      <button type="button" className={common.smallButton} onClick={() => props.onAskingChange(false)}>
        Cancel
      </button>
    </span>
  )
}
