import common from './common.module.css'

export type Tone = 'ok' | 'warn' | 'danger' | 'muted' | 'accent'

const toneClasses = {
  ok: common.ok,
  warn: common.warn,
  danger: common.danger,
  muted: common.mutedBadge,
  accent: common.accent,
} satisfies Record<Tone, string | undefined>

/** A state in words, tinted to match; the words carry the meaning, the colour only helps. */
export function Badge(props: {
  tone: Tone
  /** The smaller badge of tables and cards. */
  small?: boolean
  testId?: string
  /** What the badge stands for to tests, e.g. a connection state. */
  state?: string
  children: string
}) {
  return (
    <span
      className={`${props.small ? common.smallBadge : common.badge} ${toneClasses[props.tone]}`}
      data-testid={props.testId}
      data-state={props.state}
    >
      {props.children}
    </span>
  )
}
