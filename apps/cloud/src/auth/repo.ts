import type { Kysely } from 'kysely'
import type { CloudDB } from '../db/schema.js'

/** The user's live grants: one per signed-in relay. */
export function listGrants(db: Kysely<CloudDB>, accountId: string, now: Date) {
  return db
    .selectFrom('oauth_payloads')
    .select(['id', 'payload', 'expires_at'])
    .where('model', '=', 'Grant')
    .where('account_id', '=', accountId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .execute()
}

/**
 * Removes a grant of this account with every token issued under it; false when there is none.
 * `sessionId` is the grant's stored id, as `listGrants` returns it (see `sessionIdOf` in service.ts).
 */
export async function revokeGrant(db: Kysely<CloudDB>, accountId: string, sessionId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const grant = await trx
      .deleteFrom('oauth_payloads')
      .where('model', '=', 'Grant')
      .where('id', '=', sessionId)
      .where('account_id', '=', accountId)
      .returning('id')
      .executeTakeFirst()
    if (!grant) {
      return false
    }
    await trx.deleteFrom('oauth_payloads').where('grant_id', '=', sessionId).execute()
    return true
  })
}

/**
 * Removes every grant of this account with every token issued under it, and the account's browser
 * sessions at the authorization server (which would let a browser sign a relay in without the password).
 * Returns how many grants there were.
 */
export async function revokeAllGrants(db: Kysely<CloudDB>, accountId: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const grants = await trx
      .deleteFrom('oauth_payloads')
      .where('model', '=', 'Grant')
      .where('account_id', '=', accountId)
      .returning('id')
      .execute()
    if (grants.length > 0) {
      await trx
        .deleteFrom('oauth_payloads')
        .where(
          'grant_id',
          'in',
          grants.map((grant) => grant.id),
        )
        .execute()
    }
    await trx.deleteFrom('oauth_payloads').where('model', '=', 'Session').where('account_id', '=', accountId).execute()
    return grants.length
  })
}
