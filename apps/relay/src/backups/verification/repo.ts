import type { Kysely, Selectable } from 'kysely'
import type { BackupVerificationsTable, RelayDB } from '../../db/schema.js'

export type BackupVerificationRow = Selectable<BackupVerificationsTable>

export function findVerifications(db: Kysely<RelayDB>, backupIds: readonly string[]): Promise<BackupVerificationRow[]> {
  if (backupIds.length === 0) {
    return Promise.resolve([])
  }
  return db.selectFrom('backup_verifications').selectAll().where('backup_id', 'in', backupIds).execute()
}

export function findLatestVerification(db: Kysely<RelayDB>): Promise<BackupVerificationRow | undefined> {
  return db
    .selectFrom('backup_verifications')
    .selectAll()
    .orderBy('checked_at', 'desc')
    .orderBy('backup_id')
    .limit(1)
    .executeTakeFirst()
}

/** Writes one check of a backup; a failed check keeps the time it last succeeded. */
export function saveVerification(db: Kysely<RelayDB>, row: BackupVerificationRow): Promise<BackupVerificationRow> {
  return db
    .insertInto('backup_verifications')
    .values(row)
    .onConflict((oc) =>
      oc.column('backup_id').doUpdateSet((eb) => ({
        outcome: eb.ref('excluded.outcome'),
        error: eb.ref('excluded.error'),
        checked_at: eb.ref('excluded.checked_at'),
        verified_at: eb.fn.coalesce('excluded.verified_at', 'backup_verifications.verified_at'),
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function deleteVerification(db: Kysely<RelayDB>, backupId: string): Promise<void> {
  await db.deleteFrom('backup_verifications').where('backup_id', '=', backupId).execute()
}

/** Removes the rows of every backup but `kept`; returns how many went. */
export async function deleteVerificationsExcept(db: Kysely<RelayDB>, kept: readonly string[]): Promise<number> {
  let query = db.deleteFrom('backup_verifications')
  if (kept.length > 0) {
    query = query.where('backup_id', 'not in', kept)
  }
  const result = await query.executeTakeFirst()
  return Number(result.numDeletedRows)
}
