import { randomUUID } from 'node:crypto'
import {
  type AcknowledgeBody,
  type AcknowledgedMark,
  type Acknowledgement,
  AppError,
  type HealthArea,
  MINUTE,
  type Silence,
  type SilenceBody,
  type SilencedMark,
} from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import type { HealthChange } from '../health-states/board.js'
import * as repo from './repo.js'

/** What an item's record and its dashboard warnings carry; a key is left out when nothing applies. */
export type ItemMarks = { acknowledged?: AcknowledgedMark; silenced?: SilencedMark }

/** What the sources runtime asks before it notifies about an item (`collector:<id>`, `stream:<id>`, `junction:<id>`). */
export type HealthAlertHooks = {
  /** Told every outcome's change of health; answers whether the change may notify. */
  changed(key: string, change: HealthChange): Promise<boolean>
  /** Whether the item, or its area, is silenced now. */
  silenced(key: string): boolean
}

export type HealthAlertDeps = {
  db: Kysely<RelayDB>
  clock: Clock
  /** Whether the item has a warning now: a failing or degraded state, or a dashboard issue naming it. */
  hasWarning(item: string): Promise<boolean>
  /** Whether the collector, stream or junction exists. */
  itemExists(item: string): Promise<boolean>
}

const areaOfKind: Record<string, HealthArea> = { collector: 'Collectors', stream: 'Streams', junction: 'Junctions' }

/** `collector:<id>` → Collectors. */
export function areaOf(item: string): HealthArea | undefined {
  return areaOfKind[item.slice(0, item.indexOf(':'))]
}

/**
 * Acknowledgements and silences, saved in the database and kept in memory, since every record, every
 * dashboard poll and every outcome of every source reads them. A silence ends by itself at `until`:
 * it is compared with the clock on each read, so no timer is needed.
 */
export function createHealthAlerts({ db, clock, hasWarning, itemExists }: HealthAlertDeps) {
  const now = () => clock.now().toISOString()
  let acknowledgements = new Map<string, repo.AcknowledgementRow>()
  let silences: repo.SilenceRow[] = []
  /**
   * Items whose failing episode began while silenced: it stays quiet to its end, even when the silence
   * ends first, so what was kept back never arrives late. The next episode notifies.
   */
  const quietEpisodes = new Set<string>()
  /** Changes whenever a mark changes, apart from silences ending (see `nextEnd`). */
  let version = 0

  /** The silence of the item or its area that ends last; undefined when none is in force. */
  function silenceOf(item: string | undefined, area: HealthArea | undefined): repo.SilenceRow | undefined {
    const at = now()
    let found: repo.SilenceRow | undefined
    for (const silence of silences) {
      const applies = (item !== undefined && silence.item === item) || (area !== undefined && silence.area === area)
      if (applies && silence.until > at && (found === undefined || silence.until > found.until)) {
        found = silence
      }
    }
    return found
  }

  async function clearAcknowledgement(item: string): Promise<void> {
    if (acknowledgements.delete(item)) {
      version++
      await repo.deleteAcknowledgement(db, item)
    }
  }

  async function existing(item: string): Promise<void> {
    if (!(await itemExists(item))) {
      throw new AppError('NOT_FOUND', `${item} not found`)
    }
  }

  return {
    /** Reads what the database holds: at start, and after a restore replaced it. */
    async load(): Promise<void> {
      const at = now()
      await repo.deleteSilencesEndedBy(db, at)
      acknowledgements = new Map((await repo.listAcknowledgements(db)).map((row) => [row.item, row]))
      silences = await repo.listSilences(db, at)
      quietEpisodes.clear()
      version++
    },

    listAcknowledgements(): Acknowledgement[] {
      return [...acknowledgements.values()].map(toAcknowledgement)
    },

    /** Marks the item's warnings seen; refused when it has none, so a future failure is never pre-acknowledged. */
    async acknowledge({ item, note }: AcknowledgeBody): Promise<Acknowledgement> {
      await existing(item)
      if (!(await hasWarning(item))) {
        throw new AppError('CONFLICT', `${item} has no warning to acknowledge`)
      }
      const row = { item, note: note ?? null, at: now() }
      await repo.saveAcknowledgement(db, row)
      acknowledgements.set(item, row)
      version++
      return toAcknowledgement(row)
    },

    async unacknowledge(item: string): Promise<void> {
      if (!acknowledgements.has(item)) {
        throw new AppError('NOT_FOUND', `${item} is not acknowledged`)
      }
      await clearAcknowledgement(item)
    },

    /** The silences in force, ending soonest first; ended ones are removed on the way. */
    async listSilences(): Promise<Silence[]> {
      const at = now()
      if (silences.some((silence) => silence.until <= at)) {
        silences = silences.filter((silence) => silence.until > at)
        await repo.deleteSilencesEndedBy(db, at)
      }
      return [...silences].sort((a, b) => a.until.localeCompare(b.until)).map(toSilence)
    },

    async silence({ target, minutes, reason }: SilenceBody): Promise<Silence> {
      if ('item' in target) {
        await existing(target.item)
      }
      const start = clock.now()
      const row: repo.SilenceRow = {
        id: randomUUID(),
        item: 'item' in target ? target.item : null,
        area: 'area' in target ? target.area : null,
        reason: reason ?? null,
        created_at: start.toISOString(),
        until: new Date(start.getTime() + minutes * MINUTE).toISOString(),
      }
      await repo.insertSilence(db, row)
      silences.push(row)
      version++
      return toSilence(row)
    },

    /** Ends a silence early. */
    async unsilence(id: string): Promise<void> {
      const at = now()
      const found = silences.find((silence) => silence.id === id && silence.until > at)
      if (!found) {
        throw new AppError('NOT_FOUND', `Silence ${id} not found`)
      }
      silences = silences.filter((silence) => silence !== found)
      version++
      await repo.deleteSilence(db, id)
    },

    /** The marks of an item (and of its area, which the item's kind gives unless named). */
    marksOf(item: string | undefined, area = item === undefined ? undefined : areaOf(item)): ItemMarks {
      const acknowledgement = item === undefined ? undefined : acknowledgements.get(item)
      const silence = silenceOf(item, area)
      return {
        ...(acknowledgement && { acknowledged: { at: acknowledgement.at, note: acknowledgement.note } }),
        ...(silence && { silenced: { until: silence.until, reason: silence.reason } }),
      }
    },

    version: () => version,

    /** When the first silence in force ends (ms since 1970); Infinity when none is. */
    nextEnd(): number {
      const at = now()
      const ends = silences.filter((silence) => silence.until > at).map((silence) => Date.parse(silence.until))
      return Math.min(Infinity, ...ends)
    },

    silenced: (key: string): boolean => silenceOf(key, areaOf(key)) !== undefined,

    /**
     * An acknowledgement lasts one episode: it ends when the item recovers (turns healthy, or stops
     * failing) and when it starts failing, which begins a new one. A failing episode that began
     * silenced stays quiet, its recovery included.
     */
    async changed(key: string, { before, after }: HealthChange): Promise<boolean> {
      const moved = before.state !== after.state
      const recovered = moved && (after.state === 'healthy' || before.state === 'failing')
      const startsFailing = moved && after.state === 'failing'
      if (recovered || startsFailing) {
        await clearAcknowledgement(key)
      }
      const silenced = silenceOf(key, areaOf(key)) !== undefined
      if (startsFailing) {
        if (silenced) {
          quietEpisodes.add(key)
        } else {
          quietEpisodes.delete(key)
        }
      }
      const quiet = silenced || quietEpisodes.has(key)
      if (moved && before.state === 'failing') {
        quietEpisodes.delete(key)
      }
      return !quiet
    },

    /** A deleted item: its acknowledgement and silences go with it. */
    async forgetItem(item: string): Promise<void> {
      acknowledgements.delete(item)
      quietEpisodes.delete(item)
      silences = silences.filter((silence) => silence.item !== item)
      version++
      await repo.deleteItem(db, item)
    },
  }
}

export type HealthAlerts = ReturnType<typeof createHealthAlerts>

function toAcknowledgement(row: repo.AcknowledgementRow): Acknowledgement {
  return { item: row.item, at: row.at, note: row.note }
}

function toSilence(row: repo.SilenceRow): Silence {
  return {
    id: row.id,
    // A row names an item or an area, never neither.
    target: row.item === null ? { area: row.area as HealthArea } : { item: row.item },
    createdAt: row.created_at,
    until: row.until,
    reason: row.reason,
  }
}
