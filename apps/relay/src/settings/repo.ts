import type { Kysely } from 'kysely'
import type { RelayDB } from '../db/schema.js'

/** A JSON value under a key in app_settings, or undefined when the key is unset. */
export async function findSetting(db: Kysely<RelayDB>, key: string): Promise<unknown> {
  const row = await db.selectFrom('app_settings').select('value').where('key', '=', key).executeTakeFirst()
  return row === undefined ? undefined : JSON.parse(row.value)
}

export async function saveSetting(db: Kysely<RelayDB>, key: string, value: unknown, now: Date): Promise<void> {
  const row = { key, value: JSON.stringify(value), updated_at: now.toISOString() }
  await db
    .insertInto('app_settings')
    .values(row)
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: row.value, updated_at: row.updated_at }))
    .execute()
}
