import type { NotificationCategory, NotificationType } from '@relay/contracts'
import type { ExpressionBuilder, Insertable, Kysely, Selectable } from 'kysely'
import type { NotificationsTable, RelayDB } from '../db/schema.js'

export type NotificationRow = Selectable<NotificationsTable>
type Db = Kysely<RelayDB>

/** A row is expired once its expiry time has come, unless it is persistent. */
function isExpired(eb: ExpressionBuilder<RelayDB, 'notifications'>, now: string) {
  return eb.and([eb('persistent', '=', 0), eb('expires_at', 'is not', null), eb('expires_at', '<=', now)])
}

export function insertNotification(db: Db, row: Insertable<NotificationsTable>): Promise<NotificationRow> {
  return db.insertInto('notifications').values(row).returningAll().executeTakeFirstOrThrow()
}

/** The open (unresolved) notification with this dedupe key, if any. */
export function findOpen(db: Db, dedupeKey: string): Promise<NotificationRow | undefined> {
  return db
    .selectFrom('notifications')
    .selectAll()
    .where('dedupe_key', '=', dedupeKey)
    .where('resolved_at', 'is', null)
    .executeTakeFirst()
}

/** One more occurrence of an open notification's condition: count, last seen, latest text and expiry. */
export function repeatOpen(
  db: Db,
  id: string,
  changes: { message: string; lastSeenAt: string; expiresAt: string | null },
): Promise<NotificationRow> {
  return db
    .updateTable('notifications')
    .set((eb) => ({
      occurrences: eb('occurrences', '+', 1),
      last_seen_at: changes.lastSeenAt,
      message: changes.message,
      expires_at: changes.expiresAt,
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Marks the open notification with this dedupe key resolved; undefined when none was open. */
export function resolveOpen(db: Db, dedupeKey: string, at: string): Promise<NotificationRow | undefined> {
  return db
    .updateTable('notifications')
    .set({ resolved_at: at })
    .where('dedupe_key', '=', dedupeKey)
    .where('resolved_at', 'is', null)
    .returningAll()
    .executeTakeFirst()
}

export function findNotification(db: Db, id: string): Promise<NotificationRow | undefined> {
  return db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst()
}

/**
 * Unexpired notifications after `since` (delivered or not, so every open tab sees each one), or,
 * without `since`, those not yet delivered. Oldest first.
 */
export function listPending(db: Db, { since, now, limit }: { since?: number; now: string; limit: number }) {
  let query = db
    .selectFrom('notifications')
    .selectAll()
    .where((eb) => eb.not(isExpired(eb, now)))
  query = since === undefined ? query.where('is_delivered', '=', 0) : query.where('seq', '>', since)
  return query.orderBy('seq', 'asc').limit(limit).execute()
}

export async function findLastSeq(db: Db): Promise<number> {
  const row = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.max('seq').as('last'))
    .executeTakeFirst()
  return Number(row?.last ?? 0)
}

/** The earliest expiry among rows that can expire, or null when none can. */
export async function findNextExpiry(db: Db): Promise<string | null> {
  const row = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.min('expires_at').as('next'))
    .where('persistent', '=', 0)
    .where('expires_at', 'is not', null)
    .executeTakeFirst()
  return row?.next ?? null
}

export type HistoryFilter = { category?: NotificationCategory; type?: NotificationType }

function filtered(db: Db, { category, type }: HistoryFilter) {
  let query = db.selectFrom('notifications')
  if (category) {
    query = query.where('category', '=', category)
  }
  if (type) {
    query = query.where('type', '=', type)
  }
  return query
}

/** Newest first, strictly older than `before`. */
export function listHistory(db: Db, filter: HistoryFilter & { before?: number; limit: number }) {
  let query = filtered(db, filter).selectAll()
  if (filter.before !== undefined) {
    query = query.where('seq', '<', filter.before)
  }
  return query.orderBy('seq', 'desc').limit(filter.limit).execute()
}

export async function countHistory(db: Db, filter: HistoryFilter): Promise<number> {
  const row = await filtered(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow()
  return Number(row.count)
}

/** Marks the given notifications delivered; ids that are unknown or already delivered are skipped. */
export async function markDelivered(db: Db, ids: readonly string[], now: string): Promise<number> {
  const result = await db
    .updateTable('notifications')
    .set({ is_delivered: 1, delivered_at: now })
    .where('id', 'in', ids)
    .where('is_delivered', '=', 0)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

export async function deleteExpired(db: Db, now: string): Promise<number> {
  const result = await db
    .deleteFrom('notifications')
    .where((eb) => isExpired(eb, now))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

export async function deleteDeliveredBefore(db: Db, cutoff: string): Promise<number> {
  const result = await db
    .deleteFrom('notifications')
    .where('is_delivered', '=', 1)
    .where('delivered_at', '<', cutoff)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Removes notifications made before `cutoff`, except persistent ones nobody has seen yet. */
export async function deleteCreatedBefore(db: Db, cutoff: string): Promise<number> {
  const result = await db
    .deleteFrom('notifications')
    .where('created_at', '<', cutoff)
    .where((eb) => eb.or([eb('persistent', '=', 0), eb('is_delivered', '=', 1)]))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
