import { createHash, randomBytes } from 'node:crypto'
import { authTimings, type SessionUser } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import { type HeldRows, holdRows } from '../db/database.js'
import type { RelayDB } from '../db/schema.js'

const hash = (token: string) => createHash('sha256').update(token).digest('base64url')

/**
 * Sessions of the web UI: a random token in a cookie, of which only the SHA-256 is stored. They
 * last 7 days and survive restarts.
 */
export function createFrontendSessions({ db, clock }: { db: Kysely<RelayDB>; clock: Clock }) {
  return {
    /** Starts a session for `user`; returns the token for the cookie. */
    async create(user: SessionUser): Promise<string> {
      const now = clock.now()
      await db.deleteFrom('frontend_sessions').where('expires_at', '<=', now.toISOString()).execute()
      const token = randomBytes(32).toString('base64url')
      await db
        .insertInto('frontend_sessions')
        .values({
          token_hash: hash(token),
          user_kind: user.kind,
          user_id: user.id,
          user_name: user.name,
          user_email: user.email,
          created_at: now.toISOString(),
          expires_at: new Date(now.getTime() + authTimings.frontendSession).toISOString(),
        })
        .execute()
      return token
    },

    async find(token: string): Promise<SessionUser | undefined> {
      const row = await db
        .selectFrom('frontend_sessions')
        .selectAll()
        .where('token_hash', '=', hash(token))
        .where('expires_at', '>', clock.now().toISOString())
        .executeTakeFirst()
      return row && { kind: row.user_kind, id: row.user_id, name: row.user_name, email: row.user_email }
    },

    async end(token: string): Promise<void> {
      await db.deleteFrom('frontend_sessions').where('token_hash', '=', hash(token)).execute()
    },

    /** Every session as it is now, to replace those of a restored database. */
    hold: (): Promise<HeldRows> => holdRows(db, 'frontend_sessions'),
  }
}

export type FrontendSessions = ReturnType<typeof createFrontendSessions>
