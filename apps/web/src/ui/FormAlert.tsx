import common from './common.module.css'

/** The errors that belong to no field, above the form's buttons. */
export function FormAlert(props: { title: string; messages: readonly string[]; className?: string; testId?: string }) {
  if (props.messages.length === 0) {
    return null
  }
  return (
    <div
      role="alert"
      className={props.className ? `${common.alert} ${props.className}` : common.alert}
      data-testid={props.testId ?? 'form-error'}
    >
      <strong>{props.title}</strong>
      {props.messages.map((message) => (
        <p key={message}>{message}</p>
      ))}
    </div>
  )
}
