import type { HealthState, ItemHealth, SourceHealthSettings } from '@relay/contracts'

/** One item's health, with the success streak the recovery threshold counts. */
export type HealthSnapshot = ItemHealth & { consecutiveSuccesses: number }

/** What one poll or send gave: a success (possibly degraded, with why) or a failure (with its error). */
export type Outcome = { ok: true; degraded?: string } | { ok: false; error: string }

export function stoppedHealth(at: string, reason: string | null = null): HealthSnapshot {
  return { state: 'stopped', since: at, reason, consecutiveFailures: 0, consecutiveSuccesses: 0 }
}

export function startingHealth(at: string): HealthSnapshot {
  return { state: 'starting', since: at, reason: null, consecutiveFailures: 0, consecutiveSuccesses: 0 }
}

/**
 * The state after one outcome, with hysteresis so a flapping source changes state once per episode:
 * - `failuresBeforeFailing` consecutive failures make it `failing`; fewer make a working item
 *   `degraded` (a starting one stays `starting`, nothing has worked yet);
 * - a failing item stays failing until `successesBeforeHealthy` consecutive successes;
 * - any other success makes it `healthy`, or `degraded` when the outcome says so.
 * `since` moves only when the state changes.
 */
export function nextHealth(
  current: HealthSnapshot,
  outcome: Outcome,
  at: string,
  {
    failuresBeforeFailing,
    successesBeforeHealthy,
  }: Pick<SourceHealthSettings, 'failuresBeforeFailing' | 'successesBeforeHealthy'>,
): HealthSnapshot {
  const enter = (
    state: HealthState,
    reason: string | null,
    streaks: Pick<HealthSnapshot, 'consecutiveFailures' | 'consecutiveSuccesses'>,
  ) => ({
    state,
    since: state === current.state ? current.since : at,
    reason,
    ...streaks,
  })
  if (!outcome.ok) {
    const streaks = { consecutiveFailures: current.consecutiveFailures + 1, consecutiveSuccesses: 0 }
    if (streaks.consecutiveFailures >= failuresBeforeFailing || current.state === 'failing') {
      return enter('failing', outcome.error, streaks)
    }
    if (current.state === 'starting' || current.state === 'stopped') {
      return enter('starting', outcome.error, streaks)
    }
    const count = `${streaks.consecutiveFailures} of ${failuresBeforeFailing} failures before failing`
    return enter('degraded', `${outcome.error} (${count})`, streaks)
  }
  const streaks = { consecutiveFailures: 0, consecutiveSuccesses: current.consecutiveSuccesses + 1 }
  if (current.state === 'failing' && streaks.consecutiveSuccesses < successesBeforeHealthy) {
    return enter('failing', current.reason, streaks)
  }
  return outcome.degraded ? enter('degraded', outcome.degraded, streaks) : enter('healthy', null, streaks)
}

/** Worst first: the order in which the health of a junction's parts decides its own. */
const severity: Record<HealthState, number> = { failing: 4, degraded: 3, starting: 2, healthy: 1, stopped: 0 }

/**
 * A running junction's health from its parts: failing when every part fails, degraded when some
 * fail or are degraded, starting while any has not worked yet, healthy otherwise.
 */
export function combinedHealth(parts: readonly { name: string; health: ItemHealth }[], at: string): ItemHealth {
  const running = parts.filter((part) => part.health.state !== 'stopped')
  if (running.length === 0) {
    return { state: 'starting', since: at, reason: null, consecutiveFailures: 0 }
  }
  const worst = running.reduce((a, b) => (severity[b.health.state] > severity[a.health.state] ? b : a))
  const failing = running.filter((part) => part.health.state === 'failing')
  const state: HealthState =
    worst.health.state === 'failing' && failing.length < running.length ? 'degraded' : worst.health.state
  const reason =
    failing.length > 0
      ? `${failing.map((part) => part.name).join(', ')} failing`
      : worst.health.reason && `${worst.name}: ${worst.health.reason}`
  return {
    state,
    since: worst.health.since,
    reason: state === 'healthy' ? null : reason,
    consecutiveFailures: worst.health.consecutiveFailures,
  }
}

/** The public part of a snapshot. */
export function publicHealth({ state, since, reason, consecutiveFailures }: HealthSnapshot): ItemHealth {
  return { state, since, reason, consecutiveFailures }
}
