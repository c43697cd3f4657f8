import type { ExpressionBuilder, Kysely, Selectable, Transaction } from 'kysely'
import type { CloudDB, EmailTokensTable } from '../db/schema.js'

export type EmailTokenRow = Selectable<EmailTokensTable>
export type EmailTokenPurpose = EmailTokensTable['purpose']
type Db = Kysely<CloudDB> | Transaction<CloudDB>

export function insertEmailToken(
  db: Db,
  token: {
    tokenHash: string
    purpose: EmailTokenPurpose
    userId: string
    newEmail: string | null
    createdAt: Date
    expiresAt: Date
  },
) {
  return db
    .insertInto('email_tokens')
    .values({
      token_hash: token.tokenHash,
      purpose: token.purpose,
      user_id: token.userId,
      new_email: token.newEmail,
      created_at: token.createdAt,
      expires_at: token.expiresAt,
    })
    .execute()
}

/** Which token, for what, and when: a token is usable for its purpose while unused and not expired at `now`. */
export type TokenLookup = { tokenHash: string; purpose: EmailTokenPurpose; now: Date }

const usable =
  ({ tokenHash, purpose, now }: TokenLookup) =>
  (eb: ExpressionBuilder<CloudDB, 'email_tokens'>) =>
    eb.and([
      eb('token_hash', '=', tokenHash),
      eb('purpose', '=', purpose),
      eb('used_at', 'is', null),
      eb('expires_at', '>', now),
    ])

export function findUsableEmailToken(db: Db, lookup: TokenLookup): Promise<EmailTokenRow | undefined> {
  return db.selectFrom('email_tokens').selectAll().where(usable(lookup)).executeTakeFirst()
}

/** Marks the token used if it still can be, in one statement: of two requests racing, only one gets the row. */
export function consumeEmailToken(db: Db, lookup: TokenLookup): Promise<EmailTokenRow | undefined> {
  return db
    .updateTable('email_tokens')
    .set({ used_at: lookup.now })
    .where(usable(lookup))
    .returningAll()
    .executeTakeFirst()
}

/** Ends the user's other unused tokens, of the given purposes (every purpose without). */
export function retireEmailTokens(db: Db, userId: string, now: Date, purposes?: EmailTokenPurpose[]) {
  let query = db
    .updateTable('email_tokens')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
  if (purposes) {
    query = query.where('purpose', 'in', purposes)
  }
  return query.execute()
}

/** Removes tokens that expired before `before`; used and unused alike can no longer do anything. */
export async function deleteExpiredEmailTokens(db: Db, before: Date): Promise<number> {
  const result = await db.deleteFrom('email_tokens').where('expires_at', '<=', before).executeTakeFirst()
  return Number(result.numDeletedRows)
}
