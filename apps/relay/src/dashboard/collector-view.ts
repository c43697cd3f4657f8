import { type CollectorStats, excludedCollectorType } from '@relay/contracts'
import type { Selectable } from 'kysely'
import type { CollectorsTable } from '../db/schema.js'
import type { CollectorEvent } from '../sources/runtime.js'
import { type CollectorHealthInput, collectorStats, type HealthyCollectors, type PollingHealth } from './health.js'

/** The columns of a collector the statistics read. */
export type CollectorStatsRow = Pick<
  Selectable<CollectorsTable>,
  | 'id'
  | 'name'
  | 'collector_type'
  | 'access_token_salt'
  | 'last_fetch_time'
  | 'last_fetch_successful'
  | 'last_fetch_error_message'
  | 'last_fetch_total_sensors'
  | 'last_fetch_new_sensors'
  | 'last_fetch_lost_sensors'
  | 'created_at'
>

export type CollectorStatsViewDeps = {
  /** Every collector, read once on first use and again after `forget`. */
  load(): Promise<readonly CollectorStatsRow[]>
  polling(): PollingHealth
  isUnlocked(row: CollectorStatsRow): boolean
}

/**
 * Fetched fine, no password-protected token, nothing lost: such a collector adds only to the counts.
 * The rest are listed one by one, in the order they were created, as the full computation lists them.
 */
function plainlyHealthy(row: CollectorStatsRow): boolean {
  return (
    row.last_fetch_time !== null &&
    row.last_fetch_successful === 1 &&
    row.access_token_salt === null &&
    row.last_fetch_lost_sensors === 0
  )
}

/** A row as the health rules read it. */
export function healthInput(row: Omit<CollectorStatsRow, 'created_at'>, unlocked: boolean): CollectorHealthInput {
  return {
    id: row.id,
    name: row.name,
    collectorType: row.collector_type,
    lastFetchTime: row.last_fetch_time,
    lastFetchSuccessful: row.last_fetch_successful === 1,
    lastFetchErrorMessage: row.last_fetch_error_message,
    externalAccessToken: row.access_token_salt !== null,
    unlocked,
    lastFetchTotalSensors: row.last_fetch_total_sensors,
    lastFetchNewSensors: row.last_fetch_new_sensors,
    lastFetchLostSensors: row.last_fetch_lost_sensors,
  }
}

const byCreation = (a: CollectorStatsRow, b: CollectorStatsRow) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

type Loaded = {
  rows: Map<string, CollectorStatsRow>
  /** Collectors with something to report, by id. */
  listed: Map<string, CollectorStatsRow>
  healthy: HealthyCollectors
}

/**
 * The collector statistics kept in memory: loaded once, then changed by the service's and the
 * runtime's events instead of reading every row on each dashboard poll. Between changes the same
 * answer object is returned, so its serialized form can be reused too.
 */
export function createCollectorStatsView({ load, polling, isUnlocked }: CollectorStatsViewDeps) {
  let loaded: Loaded | undefined
  let loading: Promise<Loaded> | undefined
  /** Events that arrive while the rows load: applied after, since the load may or may not have seen them. */
  let pending: Array<(into: Loaded) => void> = []
  let version = 0
  /** Bumped by `forget`: a load started before it is of the old database. */
  let generation = 0
  let answer: { version: number; polling: PollingHealth; stats: CollectorStats } | undefined

  function account(into: Loaded, row: CollectorStatsRow, sign: 1 | -1) {
    if (!plainlyHealthy(row)) {
      if (sign === 1) {
        into.listed.set(row.id, row)
      } else {
        into.listed.delete(row.id)
      }
      return
    }
    into.healthy.count += sign
    into.healthy.totalSensors += sign * row.last_fetch_total_sensors
    into.healthy.newSensors += sign * row.last_fetch_new_sensors
  }

  function put(into: Loaded, row: CollectorStatsRow) {
    remove(into, row.id)
    if (row.collector_type !== excludedCollectorType) {
      into.rows.set(row.id, row)
      account(into, row, 1)
    }
  }

  function remove(into: Loaded, id: string) {
    const known = into.rows.get(id)
    if (known) {
      account(into, known, -1)
      into.rows.delete(id)
    }
  }

  /** Applies a change now, or after the rows being loaded; before any load there is nothing to change. */
  function change(apply: (into: Loaded) => void) {
    version++
    if (loaded) {
      apply(loaded)
    } else if (loading) {
      pending.push(apply)
    }
  }

  /**
   * Reads every row; the events that came meanwhile are applied in the same step as the rows become
   * current, so none falls in between. A `forget` meanwhile (a new generation) leaves them unused.
   */
  async function loadRows(started: number): Promise<Loaded> {
    const into: Loaded = { rows: new Map(), listed: new Map(), healthy: { count: 0, totalSensors: 0, newSensors: 0 } }
    let read: readonly CollectorStatsRow[]
    try {
      read = await load()
    } catch (err) {
      if (started === generation) {
        loading = undefined
        pending = []
      }
      throw err
    }
    for (const row of read) {
      put(into, row)
    }
    if (started === generation) {
      for (const apply of pending) {
        apply(into)
      }
      pending = []
      loading = undefined
      loaded = into
    }
    return into
  }

  function rows(): Promise<Loaded> {
    if (loaded) {
      return Promise.resolve(loaded)
    }
    loading ??= loadRows(generation)
    return loading
  }

  const samePolling = (a: PollingHealth, b: PollingHealth) =>
    a.active === b.active && a.failing === b.failing && a.degraded === b.degraded

  return {
    /** The statistics now; the same object as last time when nothing changed since. */
    async stats(): Promise<CollectorStats> {
      const current = await rows()
      const now = polling()
      if (answer && answer.version === version && samePolling(answer.polling, now)) {
        return answer.stats
      }
      const listed = [...current.listed.values()].sort(byCreation).map((row) => healthInput(row, isUnlocked(row)))
      const stats = collectorStats(listed, now, { ...current.healthy })
      // Rows forgotten while they loaded answer this call only.
      if (current === loaded) {
        answer = { version, polling: now, stats }
      }
      return stats
    },

    /**
     * A collector was created or changed: its row as read after the change. Of a known collector only
     * what the service changes is taken; its fetch results come from the runtime's events, which may be
     * newer than this read.
     */
    saved(row: CollectorStatsRow): void {
      change((into) => {
        const known = into.rows.get(row.id)
        const { name, collector_type, access_token_salt } = row
        put(into, known ? { ...known, name, collector_type, access_token_salt } : row)
      })
    },

    removed(id: string): void {
      change((into) => remove(into, id))
    },

    /** What the runtime changed: a fetch's results, or whether a token is unlocked (read when answering). */
    apply(event: CollectorEvent): void {
      if (event.kind === 'unlock') {
        version++
        return
      }
      change((into) => {
        const known = into.rows.get(event.id)
        if (known) {
          put(into, { ...known, ...event.saved })
        }
      })
    },

    /** The database was replaced: everything is read again on the next use. */
    forget(): void {
      version++
      generation++
      loaded = undefined
      loading = undefined
      pending = []
    },
  }
}

export type CollectorStatsView = ReturnType<typeof createCollectorStatsView>
