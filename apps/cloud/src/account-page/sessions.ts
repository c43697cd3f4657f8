import { createHash, randomBytes } from 'node:crypto'
import { HOUR } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { CloudDB } from '../db/schema.js'
import * as repo from './repo.js'

/** How long a browser session lasts without use; each request starts the period again. */
export const sessionIdleLifetime = 12 * HOUR

/** What a browser session is listed and revoked by: the SHA-256 of its token, in hex. */
export function sessionIdOfToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

const tokenPattern = /^[\w-]{43}$/

export type BrowserSession = { id: string; userId: string }

export type BrowserSessionView = { id: string; createdAt: Date; lastSeenAt: Date; current: boolean }

/**
 * The account page's sign-ins: a random token in the browser's cookie, its hash in the database.
 * The token itself is never stored or logged.
 */
export function createBrowserSessions({ db, clock }: { db: Kysely<CloudDB>; clock: Clock }) {
  const expiry = (now: Date) => new Date(now.getTime() + sessionIdleLifetime)

  return {
    /** Starts a session for the user; the token goes into the cookie and nowhere else. */
    async start(userId: string): Promise<{ token: string; session: BrowserSession }> {
      const token = randomBytes(32).toString('base64url')
      const now = clock.now()
      const id = sessionIdOfToken(token)
      await repo.insertSession(db, { id, userId, now, expiresAt: expiry(now) })
      return { token, session: { id, userId } }
    },

    /** The live session of a cookie's token, its expiry moved on; undefined for anything else. */
    async resume(token: string | undefined): Promise<BrowserSession | undefined> {
      if (!token || !tokenPattern.test(token)) {
        return undefined
      }
      const now = clock.now()
      const row = await repo.touchSession(db, sessionIdOfToken(token), now, expiry(now))
      return row && { id: row.id, userId: row.user_id }
    },

    async list(userId: string, currentId: string): Promise<BrowserSessionView[]> {
      const rows = await repo.listSessions(db, userId, clock.now())
      return rows.map((row) => ({
        id: row.id,
        createdAt: row.created_at,
        lastSeenAt: row.last_seen_at,
        current: row.id === currentId,
      }))
    },

    /** Ends one of the user's sessions; false when the user has no such session. */
    async end(userId: string, id: string): Promise<boolean> {
      return (await repo.deleteSessions(db, userId, { id })) > 0
    },

    /** Ends every session of the user: a password reset signs every browser out. */
    endAll(userId: string): Promise<number> {
      return repo.deleteSessions(db, userId, 'all')
    },

    /** Removes the rows of sessions that have lapsed; they already read as missing. */
    pruneExpired(): Promise<number> {
      return repo.deleteExpiredSessions(db, clock.now())
    },
  }
}

export type BrowserSessions = ReturnType<typeof createBrowserSessions>

/** The cookie's name: `__Host-` over HTTPS, so no other host or path can set or shadow it. */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-relay-account' : 'relay-account'
}

export function sessionCookie(token: string, secure: boolean): string {
  return `${sessionCookieName(secure)}=${token}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
}

export function clearedSessionCookie(secure: boolean): string {
  return `${sessionCookieName(secure)}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`
}

/** The value of one cookie in a Cookie header; undefined when it is absent or sent twice. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  const values = (header ?? '')
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${name}=`))
    .map((pair) => pair.slice(name.length + 1))
  return values.length === 1 ? values[0] : undefined
}
