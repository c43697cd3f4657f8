import { randomUUID } from 'node:crypto'
import {
  AppError,
  type CreateNotificationBody,
  DAY,
  type HistoryQuery,
  type HistoryReply,
  invalidField,
  type Notification,
  type NotificationKind,
  notificationKinds,
  notificationLimits,
  type PendingReply,
} from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import { kindTitles } from './kinds.js'
import * as repo from './repo.js'

export type NotificationDeps = { db: Kysely<RelayDB>; clock: Clock; log: FastifyBaseLogger }

/** The text of a pre-built notification; the kind fixes its type, category, expiry and persistence. */
export type KindContent = { message: string; title?: string }

/** The only way notifications are made: routes and every other relay feature call this service. */
export function createNotificationService({ db, clock, log }: NotificationDeps) {
  const now = () => clock.now().toISOString()
  // What the last database visit learned, so a poll that can find nothing new answers from memory.
  // This service makes every notification, so inserts keep both current; deletes only make them
  // conservative (an earlier expiry or a higher sequence than the table holds), never wrong.
  const known: { lastSeq: number | undefined; nextExpiry: string | null | undefined } = {
    lastSeq: undefined,
    nextExpiry: undefined,
  }

  async function insert(fields: {
    type: Notification['type']
    category: Notification['category']
    message: string
    title: string | null
    duration: number | null
    persistent: boolean
    expiresAt: string | null
    dedupeKey?: string
  }): Promise<Notification> {
    const row = await repo.insertNotification(db, {
      dedupe_key: fields.dedupeKey ?? null,
      id: randomUUID(),
      type: fields.type,
      category: fields.category,
      message: clip(fields.message, notificationLimits.messageMaxLength),
      title: fields.title === null ? null : clip(fields.title, notificationLimits.titleMaxLength),
      duration: fields.duration,
      persistent: fields.persistent ? 1 : 0,
      created_at: now(),
      is_delivered: 0,
      expires_at: fields.persistent ? null : fields.expiresAt,
    })
    known.lastSeq = row.seq
    if (row.expires_at !== null && known.nextExpiry !== undefined) {
      known.nextExpiry =
        known.nextExpiry === null || row.expires_at < known.nextExpiry ? row.expires_at : known.nextExpiry
    }
    log.debug({ id: row.id, type: row.type, category: row.category }, 'notification created')
    return toNotification(row)
  }

  /** The fields of a pre-built kind: its type, category, title, expiry and persistence. */
  function kindFields(kind: NotificationKind, { message, title }: KindContent) {
    const rule = notificationKinds[kind]
    return {
      type: rule.type,
      category: rule.category,
      message,
      title: title ?? kindTitles[kind],
      duration: null,
      persistent: rule.expiresIn === null,
      expiresAt: expiryOf(kind),
    }
  }

  function expiryOf(kind: NotificationKind): string | null {
    const { expiresIn } = notificationKinds[kind]
    return expiresIn === null ? null : new Date(clock.now().getTime() + expiresIn).toISOString()
  }

  return {
    /** A notification with explicit fields (POST /api/notifications). */
    async create(body: CreateNotificationBody): Promise<Notification> {
      const persistent = body.persistent ?? false
      let expiresAt: string | null = null
      if (body.expiresAt !== undefined && !persistent) {
        const at = new Date(body.expiresAt)
        if (Number.isNaN(at.getTime())) {
          throw invalidField('expiresAt', 'must be an ISO 8601 date-time')
        }
        if (at.getTime() <= clock.now().getTime()) {
          throw invalidField('expiresAt', 'must lie in the future')
        }
        expiresAt = at.toISOString()
      }
      return insert({
        type: body.type ?? 'info',
        category: body.category ?? 'system',
        message: body.message,
        title: body.title ?? null,
        duration: body.duration ?? null,
        persistent,
        expiresAt,
      })
    },

    /** One of the spec's pre-built kinds, with its expiry and persistence. */
    notify(kind: NotificationKind, content: KindContent): Promise<Notification> {
      return insert(kindFields(kind, content))
    },

    /**
     * A pre-built kind about a lasting condition, one row per episode: while a row with this key is
     * open, a repeat updates it (occurrences, last seen, latest message, expiry pushed back) and is
     * not delivered again; otherwise a new row is made.
     */
    async raise(kind: NotificationKind, dedupeKey: string, content: KindContent): Promise<Notification> {
      const open = await repo.findOpen(db, dedupeKey)
      const at = now()
      if (open && (open.expires_at === null || open.expires_at > at)) {
        const row = await repo.repeatOpen(db, open.id, {
          message: clip(content.message, notificationLimits.messageMaxLength),
          lastSeenAt: at,
          expiresAt: open.persistent === 1 ? null : expiryOf(kind),
        })
        return toNotification(row)
      }
      if (open) {
        // Expired while still open: that episode is over as far as anybody can see.
        await repo.resolveOpen(db, dedupeKey, at)
      }
      return insert({ ...kindFields(kind, content), dedupeKey })
    },

    /** Ends the episode of this key; the resolved notification, or undefined when none was open. */
    async resolve(dedupeKey: string): Promise<Notification | undefined> {
      const row = await repo.resolveOpen(db, dedupeKey, now())
      return row && toNotification(row)
    },

    async get(id: string): Promise<Notification> {
      const row = await repo.findNotification(db, id)
      if (!row) {
        throw new AppError('NOT_FOUND', `Notification ${id} not found`)
      }
      return toNotification(row)
    },

    /** Removes what has expired, then returns the next page after `since` and the cursor to poll with. */
    async pending(since?: number): Promise<PendingReply> {
      const at = now()
      const nothingNew = since !== undefined && known.lastSeq !== undefined && since >= known.lastSeq
      const nothingExpired = known.nextExpiry === null || (known.nextExpiry !== undefined && known.nextExpiry > at)
      if (nothingNew && nothingExpired) {
        return { notifications: [], cursor: since, hasMore: false }
      }
      return db.transaction().execute(async (trx) => {
        if (!nothingExpired) {
          await repo.deleteExpired(trx, at)
          known.nextExpiry = await repo.findNextExpiry(trx)
        }
        const limit = notificationLimits.pendingPageSize
        const rows = await repo.listPending(trx, { since, now: at, limit: limit + 1 })
        const page = rows.slice(0, limit)
        const hasMore = rows.length > limit
        const last = page.at(-1)
        // A full page ends at its last row; otherwise everything up to the newest row has been seen.
        known.lastSeq = await repo.findLastSeq(trx)
        const cursor = hasMore && last ? last.seq : Math.max(since ?? 0, known.lastSeq)
        return { notifications: page.map(toNotification), cursor, hasMore }
      })
    },

    acknowledge(ids: readonly string[]): Promise<number> {
      return repo.markDelivered(db, [...new Set(ids)], now())
    },

    async history({ limit = 25, before, category, type }: HistoryQuery): Promise<HistoryReply> {
      const filter = { category, type }
      const rows = await repo.listHistory(db, { ...filter, before, limit: limit + 1 })
      const page = rows.slice(0, limit)
      const nextCursor = rows.length > limit ? (page.at(-1)?.seq ?? null) : null
      return { notifications: page.map(toNotification), nextCursor, total: await repo.countHistory(db, filter) }
    },

    removeExpired(): Promise<number> {
      return repo.deleteExpired(db, now())
    },

    /** Removes notifications older than the given age, keeping persistent ones nobody has seen. */
    cleanup(olderThanDays: number): Promise<number> {
      return repo.deleteCreatedBefore(db, new Date(clock.now().getTime() - olderThanDays * DAY).toISOString())
    },

    /** Forgets what the last database visit learned (the database was replaced by a restore). */
    forgetCache(): void {
      known.lastSeq = undefined
      known.nextExpiry = undefined
    },

    /** The background job: expired rows, and rows delivered more than 30 days ago. */
    async maintain(): Promise<{ expired: number; delivered: number }> {
      const expired = await repo.deleteExpired(db, now())
      const cutoff = new Date(clock.now().getTime() - notificationLimits.deliveredRetention).toISOString()
      const delivered = await repo.deleteDeliveredBefore(db, cutoff)
      if (expired + delivered > 0) {
        log.info({ expired, delivered }, 'notification maintenance removed rows')
      }
      return { expired, delivered }
    },
  }
}

export type NotificationService = ReturnType<typeof createNotificationService>

function toNotification(row: repo.NotificationRow): Notification {
  return {
    id: row.id,
    seq: row.seq,
    type: row.type,
    category: row.category,
    title: row.title,
    message: row.message,
    duration: row.duration,
    persistent: row.persistent === 1,
    createdAt: row.created_at,
    isDelivered: row.is_delivered === 1,
    deliveredAt: row.delivered_at,
    expiresAt: row.expires_at,
    occurrences: row.occurrences,
    lastSeenAt: row.last_seen_at ?? row.created_at,
    resolvedAt: row.resolved_at,
  }
}

/** Messages made by relay features from outside text (an error string) must still fit the limits. */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}
