import type { Kysely, Transaction } from 'kysely'
import type { CloudDB } from '../db/schema.js'

type Db = Kysely<CloudDB> | Transaction<CloudDB>

export function insertSession(db: Db, session: { id: string; userId: string; now: Date; expiresAt: Date }) {
  return db
    .insertInto('account_sessions')
    .values({
      id: session.id,
      user_id: session.userId,
      created_at: session.now,
      expires_at: session.expiresAt,
      last_seen_at: session.now,
    })
    .execute()
}

/** Finds a live session and slides its expiry in the same statement; undefined when there is none. */
export function touchSession(db: Db, id: string, now: Date, expiresAt: Date) {
  return db
    .updateTable('account_sessions')
    .set({ last_seen_at: now, expires_at: expiresAt })
    .where('id', '=', id)
    .where('expires_at', '>', now)
    .returning(['id', 'user_id'])
    .executeTakeFirst()
}

export function listSessions(db: Db, userId: string, now: Date) {
  return db
    .selectFrom('account_sessions')
    .select(['id', 'created_at', 'last_seen_at', 'expires_at'])
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .orderBy('last_seen_at', 'desc')
    .execute()
}

/** Removes the user's sessions: the one `id` names, or every one but `except`; returns how many. */
export async function deleteSessions(
  db: Db,
  userId: string,
  which: { id: string } | { except: string } | 'all',
): Promise<number> {
  let query = db.deleteFrom('account_sessions').where('user_id', '=', userId)
  if (which !== 'all') {
    query = query.where('id', 'id' in which ? '=' : '!=', 'id' in which ? which.id : which.except)
  }
  const rows = await query.returning('id').execute()
  return rows.length
}

export async function deleteExpiredSessions(db: Db, now: Date): Promise<number> {
  const rows = await db.deleteFrom('account_sessions').where('expires_at', '<=', now).returning('id').execute()
  return rows.length
}

/** The user's subscription that grants the license, if any, with the end of its paid period. */
export function findActiveSubscription(db: Db, userId: string) {
  return db
    .selectFrom('subscriptions')
    .select(['current_period_end'])
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .orderBy('updated_at', 'desc')
    .executeTakeFirst()
}

/** Every completed backup of the user, newest first: what the page offers for download. */
export function listCompletedBackups(db: Db, userId: string) {
  return db
    .selectFrom('backups')
    .select(['id', 'backend_id', 'filename', 'compressed_size', 'created_at', 'expires_at'])
    .where('user_id', '=', userId)
    .where('status', '=', 'completed')
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute()
}

export function findCompletedBackup(db: Db, userId: string, id: string) {
  return db
    .selectFrom('backups')
    .select(['s3_key', 'filename'])
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('status', '=', 'completed')
    .executeTakeFirst()
}

/**
 * Locks the user's row (the same lock a new upload takes, so none starts meanwhile) and removes
 * their backup records, returning the storage keys; undefined when the user is gone.
 */
export async function removeBackupsOf(trx: Transaction<CloudDB>, userId: string): Promise<string[] | undefined> {
  const user = await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirst()
  if (!user) {
    return undefined
  }
  const rows = await trx.deleteFrom('backups').where('user_id', '=', userId).returning('s3_key').execute()
  return rows.map((row) => row.s3_key)
}

/**
 * Removes the user and what still names them: the authorization server's artifacts (sessions,
 * grants, tokens) by account, then the user row, whose foreign keys take settings, relay
 * ownership, subscriptions and browser sessions with it.
 */
export async function deleteUser(trx: Transaction<CloudDB>, userId: string): Promise<void> {
  await trx.deleteFrom('oauth_payloads').where('account_id', '=', userId).execute()
  await trx.deleteFrom('users').where('id', '=', userId).execute()
}
