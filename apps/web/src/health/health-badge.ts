import type { HealthState, ItemHealth } from '@relay/contracts'
import type { Tone } from '../ui/Badge'
import type { SourceKind } from './item-links'

/** What has a health badge: a junction says "Idle" where a collector or stream says "Stopped". */
export type HealthSubject = SourceKind

export type HealthBadgeView = {
  label: string
  tone: Tone
  /** Why it is not healthy, shown beside the badge; null when the state says it all. */
  reason: string | null
}

const labels = {
  stopped: 'Stopped',
  starting: 'Starting',
  // A healthy item is one doing its work: polling, sending or linking.
  healthy: 'Running',
  degraded: 'Degraded',
  failing: 'Failing',
} as const satisfies Record<HealthState, string>

const tones = {
  stopped: 'muted',
  starting: 'accent',
  healthy: 'ok',
  degraded: 'warn',
  failing: 'danger',
} as const satisfies Record<HealthState, Tone>

/** States whose reason is worth reading: a stopped item's reason only repeats why it is stopped. */
const explained: ReadonlySet<HealthState> = new Set(['starting', 'degraded', 'failing'])

/**
 * The badge of an item's health as the relay reports it (with its hysteresis): a failing collector
 * is "Failing", never "Running", however its last poll went.
 */
export function healthBadge(health: ItemHealth, subject: HealthSubject): HealthBadgeView {
  const label = health.state === 'stopped' && subject === 'junction' ? 'Idle' : labels[health.state]
  return { label, tone: tones[health.state], reason: explained.has(health.state) ? health.reason : null }
}
