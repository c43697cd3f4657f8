import type { ReactNode } from 'react'
import common from './common.module.css'

/** One label and its value in a `<dl>` of facts. */
export function Fact({ label, testId, children }: { label: string; testId?: string; children: ReactNode }) {
  return (
    <div className={common.fact}>
      <dt>{label}</dt>
      <dd data-testid={testId}>{children}</dd>
    </div>
  )
}
