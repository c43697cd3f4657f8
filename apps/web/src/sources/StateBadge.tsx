import styles from './SourcesPage.module.css'

export type Tone = 'ok' | 'warn' | 'danger' | 'muted'

const toneClasses = {
  ok: styles.ok,
  warn: styles.warn,
  danger: styles.danger,
  muted: styles.mutedBadge,
} satisfies Record<Tone, string | undefined>

/** A state in words, tinted to match; the words carry the meaning, the colour only helps. */
export function StateBadge({ label, tone }: { label: string; tone: Tone }) {
  return <span className={`${styles.badge} ${toneClasses[tone]}`}>{label}</span>
}
