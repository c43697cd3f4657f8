import { randomUUID } from 'node:crypto'
import { AppError, localAuthLimits, type SessionUser } from '@relay/contracts'
import {
  type Clock,
  createSignInThrottle,
  decoyPasswordHash,
  hashPassword,
  type SignInLimits,
  verifyPassword,
} from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'

/** One relay process serves one machine, so its buckets live in memory. */
const signInLimits: SignInLimits = {
  account: { capacity: localAuthLimits.failuresPerUser, refillEvery: localAuthLimits.failureWindow },
  address: { capacity: localAuthLimits.failuresPerAddress, refillEvery: localAuthLimits.failureWindow },
}

const toUser = (row: { id: string; username: string }): SessionUser => ({
  kind: 'local',
  id: row.id,
  name: row.username,
  email: null,
})

/** Local accounts: usernames with scrypt password hashes, and throttled sign-in. */
export function createLocalUsers({ db, clock }: { db: Kysely<RelayDB>; clock: Clock }) {
  const throttle = createSignInThrottle({ limits: signInLimits, clock })

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
      const attempt = await throttle.attempt(username, address)
      const row = await db
        .selectFrom('local_users')
        .select(['id', 'username', 'password_hash'])
        .where('username', '=', username)
        .executeTakeFirst()
      // Unknown users cost the same scrypt work as known ones, so timing does not tell them apart.
      const matches = await verifyPassword(password, row?.password_hash ?? (await decoyPasswordHash()))
      if (!row || !matches) {
        throw new AppError('UNAUTHORIZED', 'Wrong username or password')
      }
      await attempt.succeeded()
      return toUser(row)
    },
  }
}

export type LocalUsers = ReturnType<typeof createLocalUsers>
