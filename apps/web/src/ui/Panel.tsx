import { type ReactNode, useId } from 'react'
import common from './common.module.css'

/** A titled panel of a page; the title names the section for screen readers. */
export function Panel(props: {
  title: string
  description?: ReactNode
  className?: string
  testId?: string
  children: ReactNode
}) {
  const headingId = useId()
  return (
    <section
      className={props.className ? `${common.panel} ${props.className}` : common.panel}
      aria-labelledby={headingId}
      data-testid={props.testId}
    >
      <header className={common.panelHeader}>
        <h2 id={headingId}>{props.title}</h2>
        {props.description && <p className={common.mutedText}>{props.description}</p>}
      </header>
      {props.children}
    </section>
  )
}
