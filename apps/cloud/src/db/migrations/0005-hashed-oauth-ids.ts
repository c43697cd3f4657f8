import { type Kysely, sql } from 'kysely'

/**
 * OAuth artifacts are stored under the SHA-256 of their ids (see the OAuth adapter): existing rows
 * are converted, so relays and browsers stay signed in. Interactions are deleted instead: they live
 * 30 minutes and hold the session cookie's value and their own id in their resume address, so a
 * sign-in under way when this runs starts again. Client ids are public and stay as they are.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`delete from oauth_payloads where model = 'Interaction'`.execute(db)
  await sql`
    update oauth_payloads set
      id = encode(sha256(convert_to(id, 'UTF8')), 'hex'),
      grant_id = encode(sha256(convert_to(grant_id, 'UTF8')), 'hex'),
      uid = encode(sha256(convert_to(uid, 'UTF8')), 'hex'),
      user_code = encode(sha256(convert_to(user_code, 'UTF8')), 'hex'),
      -- A device code is found again by its user code and saved under its id, so it keeps it.
      payload = case when model = 'DeviceCode' then payload else payload - 'jti' end
    where model <> 'Client'
  `.execute(db)
}

/** Hashes cannot be turned back into ids: going back signs everybody out (device clients stay). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from oauth_payloads where model <> 'Client'`.execute(db)
}
