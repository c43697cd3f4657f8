import type { Insertable, Kysely, Selectable } from 'kysely'
import type { HealthAcknowledgementsTable, HealthSilencesTable, RelayDB } from '../db/schema.js'

export type AcknowledgementRow = Selectable<HealthAcknowledgementsTable>
export type SilenceRow = Selectable<HealthSilencesTable>
type Db = Kysely<RelayDB>

export function listAcknowledgements(db: Db): Promise<AcknowledgementRow[]> {
  return db.selectFrom('health_acknowledgements').selectAll().orderBy('at').execute()
}

/** Acknowledging an item again replaces its note and time. */
export async function saveAcknowledgement(db: Db, row: AcknowledgementRow): Promise<void> {
  await db
    .insertInto('health_acknowledgements')
    .values(row)
    .onConflict((oc) => oc.column('item').doUpdateSet({ note: row.note, at: row.at }))
    .execute()
}

export async function deleteAcknowledgement(db: Db, item: string): Promise<boolean> {
  const result = await db.deleteFrom('health_acknowledgements').where('item', '=', item).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** The silences not yet ended at `now`, ending soonest first. */
export function listSilences(db: Db, now: string): Promise<SilenceRow[]> {
  return db.selectFrom('health_silences').selectAll().where('until', '>', now).orderBy('until').orderBy('id').execute()
}

export async function insertSilence(db: Db, row: Insertable<HealthSilencesTable>): Promise<void> {
  await db.insertInto('health_silences').values(row).execute()
}

export async function deleteSilence(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('health_silences').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}

export async function deleteSilencesEndedBy(db: Db, now: string): Promise<void> {
  await db.deleteFrom('health_silences').where('until', '<=', now).execute()
}

/** A deleted collector, stream or junction: nothing of it is left to acknowledge or silence. */
export async function deleteItem(db: Db, item: string): Promise<void> {
  await db.deleteFrom('health_acknowledgements').where('item', '=', item).execute()
  await db.deleteFrom('health_silences').where('item', '=', item).execute()
}
