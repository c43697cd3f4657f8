import { randomUUID } from 'node:crypto'
import { AppError, localAuthLimits, type SessionUser } from '@relay/contracts'
import { type Clock, decoyPasswordHash, hashPassword, verifyPassword } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'
import { createFailureThrottle } from './failure-throttle.js'

const toUser = (row: { id: string; username: string }): SessionUser => ({
  kind: 'local',
  id: row.id,
  name: row.username,
  email: null,
})

/** Local accounts: usernames with scrypt password hashes, and throttled sign-in. */
export function createLocalUsers({ db, clock }: { db: Kysely<RelayDB>; clock: Clock }) {
  const throttle = createFailureThrottle({ windowMs: localAuthLimits.failureWindow, clock })

  return {
    async exist(): Promise<boolean> {
      return (await db.selectFrom('local_users').select('id').limit(1).executeTakeFirst()) !== undefined
    },

    /** The first account; refused once any account exists. */
    async createFirst(username: string, password: string): Promise<SessionUser> {
      const row = {
        id: randomUUID(),
        username,
        password_hash: await hashPassword(password),
        created_at: clock.now().toISOString(),
      }
      // Kysely runs SQLite transactions one at a time, so two setups racing cannot both pass the check.
      await db.transaction().execute(async (trx) => {
        if (await trx.selectFrom('local_users').select('id').limit(1).executeTakeFirst()) {
          throw new AppError('CONFLICT', 'A local account exists already; sign in with it')
        }
        await trx.insertInto('local_users').values(row).execute()
      })
      return toUser(row)
    },

    /** The account, when the password matches; throttled per username and per client address. */
    async verify(username: string, password: string, address: string): Promise<SessionUser> {
      const userKey = `user:${username.toLowerCase()}`
      const limits = [
        { key: userKey, max: localAuthLimits.failuresPerUser },
        { key: `address:${address}`, max: localAuthLimits.failuresPerAddress },
      ]
      const wait = throttle.retryAfter(limits)
      if (wait > 0) {
        const minutes = Math.ceil(wait / 60_000)
        throw Object.assign(
          new AppError(
            'RATE_LIMITED',
            `Too many failed sign-ins; try again in ${minutes} minute${minutes === 1 ? '' : 's'}`,
          ),
          { retryAfterSeconds: Math.ceil(wait / 1000) },
        )
      }
      const row = await db
        .selectFrom('local_users')
        .select(['id', 'username', 'password_hash'])
        .where('username', '=', username)
        .executeTakeFirst()
      // Unknown users cost the same scrypt work as known ones, so timing does not tell them apart.
      const matches = await verifyPassword(password, row?.password_hash ?? (await decoyPasswordHash()))
      if (!row || !matches) {
        throttle.fail(limits.map((limit) => limit.key))
        throw new AppError('UNAUTHORIZED', 'Wrong username or password')
      }
      throttle.forget(userKey)
      return toUser(row)
    },
  }
}

export type LocalUsers = ReturnType<typeof createLocalUsers>
