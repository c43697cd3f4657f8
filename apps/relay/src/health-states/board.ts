import type { SourceHealthSettings } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import { type HealthSnapshot, nextHealth, type Outcome, startingHealth, stoppedHealth } from './machine.js'

/** A change of state, or a repeat of one (`before.state === after.state`). */
export type HealthChange = { before: HealthSnapshot; after: HealthSnapshot }

/** How many items of one kind are failing or degraded. */
export type HealthTally = { failing: number; degraded: number }

/** `collector:<id>` → `collector`. */
const kindOf = (key: string) => key.slice(0, key.indexOf(':'))

/**
 * The health of every running item, by key (`collector:<id>`, `stream:<id>`), in memory like the
 * pollers and senders it describes: after a restart everything starts again from `starting`.
 */
export function createHealthBoard({
  clock,
  onChange,
}: {
  clock: Clock
  /** Called on every update, a repeat of a state too (the health history keeps the changes). */
  onChange?: (key: string, before: HealthSnapshot | undefined, after: HealthSnapshot) => void
}) {
  const items = new Map<string, HealthSnapshot>()
  const now = () => clock.now().toISOString()
  /** Failing and degraded items per kind, kept as items change so the dashboard never scans them all. */
  const tallies = new Map<string, HealthTally>()

  function tallyOf(kind: string): HealthTally {
    let tally = tallies.get(kind)
    if (!tally) {
      tally = { failing: 0, degraded: 0 }
      tallies.set(kind, tally)
    }
    return tally
  }

  function adjust(key: string, snapshot: HealthSnapshot | undefined, by: 1 | -1) {
    if (snapshot?.state === 'failing' || snapshot?.state === 'degraded') {
      tallyOf(kindOf(key))[snapshot.state] += by
    }
  }

  function put(key: string, snapshot: HealthSnapshot) {
    const before = items.get(key)
    adjust(key, before, -1)
    items.set(key, snapshot)
    adjust(key, snapshot, 1)
    onChange?.(key, before, snapshot)
  }

  return {
    get: (key: string): HealthSnapshot | undefined => items.get(key),

    start(key: string): void {
      put(key, startingHealth(now()))
    },

    /** The item no longer runs: `stopped` from now on. Returns what it was. */
    stop(key: string): HealthSnapshot | undefined {
      const last = items.get(key)
      if (last && last.state !== 'stopped') {
        put(key, stoppedHealth(now()))
      }
      return last
    },

    /** The item is gone. */
    forget(key: string): void {
      adjust(key, items.get(key), -1)
      items.delete(key)
    },

    /** Feeds one outcome; unknown (stopped) items start from `starting`. */
    record(key: string, outcome: Outcome, settings: SourceHealthSettings): HealthChange {
      const at = now()
      const before = items.get(key) ?? startingHealth(at)
      const after = nextHealth(before, outcome, at, settings)
      put(key, after)
      return { before, after }
    },

    /** How many items of a kind (`collector`, `stream`) are failing or degraded; stopped ones are neither. */
    tally(kind: string): HealthTally {
      return { ...tallyOf(kind) }
    },

    clear(): void {
      items.clear()
      tallies.clear()
    },
  }
}

export type HealthBoard = ReturnType<typeof createHealthBoard>
