import type { HTMLInputTypeAttribute } from 'react'
import { InputField } from '../ui/Field'

/** A sign-in field: no capitals or spelling fixes forced on what is typed, and the error in place of the hint. */
export function TextField(props: {
  label: string
  name: string
  type?: HTMLInputTypeAttribute
  autoComplete: string
  value: string
  hint?: string
  error?: string
  onChange: (value: string) => void
}) {
  return (
    <InputField
      {...props}
      type={props.type ?? 'text'}
      autoCapitalize="none"
      spellCheck={false}
      errorReplacesHint
      errorTestId={`error-${props.name}`}
    />
  )
}
