import type { Kysely, Selectable, Transaction } from 'kysely'
import { sql } from 'kysely'
import type { CloudDB, UsersTable } from '../db/schema.js'

export type UserRow = Selectable<UsersTable>
type Db = Kysely<CloudDB> | Transaction<CloudDB>

export function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
}

export function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst()
}

export function insertUser(
  db: Db,
  user: { email: string; name: string; passwordHash: string | null; emailVerifiedAt: Date | null },
) {
  return db
    .insertInto('users')
    .values({
      email: user.email,
      name: user.name,
      password_hash: user.passwordHash,
      email_verified_at: user.emailVerifiedAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function updateUser(
  db: Db,
  id: string,
  change: { email?: string; name?: string; passwordHash?: string; emailVerifiedAt?: Date },
  now: Date,
) {
  return db
    .updateTable('users')
    .set({
      ...(change.email === undefined ? {} : { email: change.email }),
      ...(change.name === undefined ? {} : { name: change.name }),
      ...(change.passwordHash === undefined ? {} : { password_hash: change.passwordHash }),
      ...(change.emailVerifiedAt === undefined ? {} : { email_verified_at: change.emailVerifiedAt }),
      updated_at: now,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
}

/** Deletes the user; rows that reference it (links, sessions, settings) go with it. */
export async function deleteUser(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}

export function listUsers(db: Db): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('created_at').orderBy('email').execute()
}

export function countUsers(db: Db): Promise<number> {
  return db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow()
    .then(({ count }) => Number(count))
}

/** Merges `patch` into the user's metadata; keys set to null are removed. */
export function mergeUserMetadata(db: Db, id: string, patch: Record<string, unknown>, now: Date) {
  return db
    .updateTable('users')
    .set({
      metadata: sql`jsonb_strip_nulls(metadata || ${JSON.stringify(patch)}::jsonb)`,
      updated_at: now,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
}
