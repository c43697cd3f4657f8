import type { Kysely } from 'kysely'
import type { HeldRows } from '../db/database.js'
import type { RelayDB } from '../db/schema.js'
import { open, seal } from '../secrets/secret-box.js'

export type StoredSession = {
  id: number
  userId: string
  backendId: string
  refreshToken: string
  /** The sealed token as stored: a rotation replaces exactly this value or nothing. */
  sealed: string
  createdAt: string
}

/**
 * The cloud session table of the spec. The refresh token is sealed (AES-256-GCM) under the relay's
 * secret key; plaintext exists only in memory.
 */
export function createSessionStore({ db, key, backendId }: { db: Kysely<RelayDB>; key: Buffer; backendId: string }) {
  return {
    /** The session the relay acts with: the most recently stored one of this backend. */
    async current(): Promise<StoredSession | undefined> {
      const row = await db
        .selectFrom('cloud_sessions')
        .selectAll()
        .where('backend_id', '=', backendId)
        .orderBy('updated_at', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirst()
      return (
        row && {
          id: row.id,
          userId: row.user_id,
          backendId: row.backend_id,
          refreshToken: open(key, row.encrypted_refresh_token),
          sealed: row.encrypted_refresh_token,
          createdAt: row.created_at,
        }
      )
    },

    /**
     * Stores a new sign-in in place of every other session of this backend: the relay acts for the
     * user who last signed in. Returns the sessions it replaced, for revocation at the cloud.
     */
    async replace(
      userId: string,
      refreshToken: string,
      now: Date,
    ): Promise<{ userId: string; refreshToken: string }[]> {
      const at = now.toISOString()
      return db.transaction().execute(async (trx) => {
        const previous = await trx
          .selectFrom('cloud_sessions')
          .select(['user_id', 'encrypted_refresh_token'])
          .where('backend_id', '=', backendId)
          .execute()
        await trx.deleteFrom('cloud_sessions').where('backend_id', '=', backendId).execute()
        await trx
          .insertInto('cloud_sessions')
          .values({
            user_id: userId,
            backend_id: backendId,
            encrypted_refresh_token: seal(key, refreshToken),
            created_at: at,
            updated_at: at,
          })
          .execute()
        return previous.map((row) => ({ userId: row.user_id, refreshToken: open(key, row.encrypted_refresh_token) }))
      })
    },

    /**
     * Saves a rotated refresh token, unless the session changed since `previous` was read (a new
     * sign-in or a sign-out won the race). Returns whether it was saved.
     */
    async rotate(previous: StoredSession, refreshToken: string, now: Date): Promise<boolean> {
      const result = await db
        .updateTable('cloud_sessions')
        .set({ encrypted_refresh_token: seal(key, refreshToken), updated_at: now.toISOString() })
        .where('id', '=', previous.id)
        .where('encrypted_refresh_token', '=', previous.sealed)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },

    /**
     * Every stored session as it is now, to replace those of a restored database. A restore may bring
     * another secret key: the tokens are sealed again under whichever key holds when they are put back.
     */
    async hold(): Promise<HeldRows> {
      const rows = await db.selectFrom('cloud_sessions').selectAll().execute()
      const keyNow = Buffer.from(key)
      return {
        async putBack(trx) {
          const reseal = !keyNow.equals(key)
          await trx.deleteFrom('cloud_sessions').execute()
          for (const { id: _id, ...row } of rows) {
            const sealed = reseal ? seal(key, open(keyNow, row.encrypted_refresh_token)) : row.encrypted_refresh_token
            await trx
              .insertInto('cloud_sessions')
              .values({ ...row, encrypted_refresh_token: sealed })
              .execute()
          }
        },
      }
    },

    /** Forgets `session`, or every session of this backend when none is given. */
    async remove(session?: StoredSession): Promise<void> {
      let query = db.deleteFrom('cloud_sessions').where('backend_id', '=', backendId)
      if (session) {
        query = query.where('id', '=', session.id).where('encrypted_refresh_token', '=', session.sealed)
      }
      await query.execute()
    },
  }
}

export type SessionStore = ReturnType<typeof createSessionStore>
