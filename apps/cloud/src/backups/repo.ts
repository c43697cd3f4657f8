import { type Kysely, type Selectable, sql, type Transaction } from 'kysely'
import type { BackupSettingsTable, BackupsTable, CloudDB } from '../db/schema.js'

type Db = Kysely<CloudDB> | Transaction<CloudDB>
export type BackupRow = Selectable<BackupsTable>
export type SettingsRow = Selectable<BackupSettingsTable>
export type NewBackup = Omit<BackupRow, 'uncompressed_size' | 'compressed_size'> & {
  uncompressed_size: number
  compressed_size: number
}

export function findSettings(db: Db, userId: string): Promise<SettingsRow | undefined> {
  return db.selectFrom('backup_settings').selectAll().where('user_id', '=', userId).executeTakeFirst()
}

export function saveSettings(db: Db, row: SettingsRow): Promise<SettingsRow> {
  const { user_id: _, ...changes } = row
  return db
    .insertInto('backup_settings')
    .values(row)
    .onConflict((oc) => oc.column('user_id').doUpdateSet(changes))
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function setLastBackup(db: Db, userId: string, at: Date, defaults: Omit<SettingsRow, 'user_id'>) {
  await db
    .insertInto('backup_settings')
    .values({ ...defaults, user_id: userId, last_backup: at, updated_at: at })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ last_backup: at }))
    .execute()
}

/** Serialises a user's quota checks across transactions and instances (the user's row lock). */
export async function lockUser(trx: Transaction<CloudDB>, userId: string): Promise<boolean> {
  const row = await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirst()
  return row !== undefined
}

export type Usage = { count: number; bytes: number; pending: number; completed: number; failed: number }

/**
 * A user's backups by status; `count` and `bytes` are what the quotas count: completed backups and
 * pending ones created at or after `lapsedBefore`. A pending backup older than that can no longer be
 * completed, so it counts as failed from that moment, whether or not the release job has marked it yet.
 */
function usageColumns(lapsedBefore: Date) {
  const live = sql`(status = 'completed' or (status = 'pending' and created_at >= ${lapsedBefore}))`
  return [
    sql<string>`count(*) filter (where ${live})`.as('count'),
    sql<string>`coalesce(sum(compressed_size) filter (where ${live}), 0)`.as('bytes'),
    sql<string>`count(*) filter (where status = 'pending' and created_at >= ${lapsedBefore})`.as('pending'),
    sql<string>`count(*) filter (where status = 'completed')`.as('completed'),
    sql<string>`count(*) filter (where status = 'failed' or (status = 'pending' and created_at < ${lapsedBefore}))`.as(
      'failed',
    ),
  ]
}

function toUsage(row: Record<keyof Usage, string>): Usage {
  return {
    count: Number(row.count),
    bytes: Number(row.bytes),
    pending: Number(row.pending),
    completed: Number(row.completed),
    failed: Number(row.failed),
  }
}

export async function usageOf(db: Db, userId: string, lapsedBefore: Date): Promise<Usage> {
  return toUsage(
    await db
      .selectFrom('backups')
      .select(usageColumns(lapsedBefore))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
  )
}

export function findOwner(db: Db, backendId: string): Promise<string | undefined> {
  return db
    .selectFrom('backend_owners')
    .select('user_id')
    .where('backend_id', '=', backendId)
    .executeTakeFirst()
    .then((row) => row?.user_id)
}

/** Claims the backend for the user unless someone holds it; returns the owner either way. */
export async function claimBackend(db: Db, backendId: string, userId: string, now: Date): Promise<string> {
  await db
    .insertInto('backend_owners')
    .values({ backend_id: backendId, user_id: userId, claimed_at: now })
    .onConflict((oc) => oc.column('backend_id').doNothing())
    .execute()
  return (await findOwner(db, backendId)) ?? userId
}

export function insertBackup(db: Db, backup: NewBackup): Promise<BackupRow> {
  return db.insertInto('backups').values(backup).returningAll().executeTakeFirstOrThrow()
}

export function findBackup(db: Db, userId: string, id: string): Promise<BackupRow | undefined> {
  return db.selectFrom('backups').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst()
}

export function findStatusByKey(db: Db, s3Key: string): Promise<BackupRow['status'] | undefined> {
  return db
    .selectFrom('backups')
    .select('status')
    .where('s3_key', '=', s3Key)
    .executeTakeFirst()
    .then((row) => row?.status)
}

export function updateBackup(
  db: Db,
  id: string,
  changes: Partial<Pick<BackupRow, 'status'>> & { compressed_size?: number },
) {
  return db.updateTable('backups').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
}

export function deleteBackup(db: Db, userId: string, id: string): Promise<BackupRow | undefined> {
  return db.deleteFrom('backups').where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst()
}

/** A page of a user's backups, newest first; `id` breaks ties, so pages of an unchanged list never overlap. */
export async function listBackups(
  db: Db,
  userId: string,
  { backendId, limit, offset = 0 }: { backendId?: string; limit: number; offset?: number },
) {
  let query = db.selectFrom('backups').where('user_id', '=', userId)
  if (backendId) {
    query = query.where('backend_id', '=', backendId)
  }
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at', 'desc').orderBy('id').limit(limit).offset(offset).execute(),
    query.select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(total.count) }
}

type Json<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] }

/** Everything the status reply needs, in one query (one round trip, one turn of PGlite's single connection). */
export async function statusFacts(db: Db, userId: string, lapsedBefore: Date) {
  const row = await db
    .selectFrom('backups')
    .where('user_id', '=', userId)
    .select((eb) => [
      ...usageColumns(lapsedBefore),
      eb
        .selectFrom('backup_settings as s')
        .select(sql<Json<SettingsRow>>`row_to_json(s)`.as('row'))
        .where('s.user_id', '=', userId)
        .as('settings'),
      eb
        .selectFrom('backups as b')
        .select(sql<Json<BackupRow>>`row_to_json(b)`.as('row'))
        .where('b.user_id', '=', userId)
        .where('b.status', '=', 'completed')
        .orderBy('b.created_at', 'desc')
        .limit(1)
        .as('newest'),
    ])
    .executeTakeFirstOrThrow()
  const { settings, newest } = row
  return {
    settings: settings
      ? {
          ...settings,
          last_backup: settings.last_backup ? new Date(settings.last_backup) : null,
          updated_at: new Date(settings.updated_at),
        }
      : undefined,
    newest: newest
      ? {
          ...newest,
          created_at: new Date(newest.created_at),
          expires_at: newest.expires_at ? new Date(newest.expires_at) : null,
        }
      : undefined,
    usage: toUsage(row),
  }
}

/** Removes the records the cleanup worker is due to remove; returns their storage keys by kind. */
export async function removeExpired(trx: Transaction<CloudDB>, now: Date, pendingBefore: Date) {
  const expired = await trx.deleteFrom('backups').where('expires_at', '<', now).returning('s3_key').execute()
  const stalePending = await trx
    .deleteFrom('backups')
    .where('status', '=', 'pending')
    .where('created_at', '<', pendingBefore)
    .returning('s3_key')
    .execute()
  return { expired: expired.map((row) => row.s3_key), stalePending: stalePending.map((row) => row.s3_key) }
}

/** Marks pending backups created before `before` failed; returns their storage keys. */
export async function failLapsedPending(trx: Transaction<CloudDB>, before: Date): Promise<string[]> {
  const rows = await trx
    .updateTable('backups')
    .set({ status: 'failed' })
    .where('status', '=', 'pending')
    .where('created_at', '<', before)
    .returning('s3_key')
    .execute()
  return rows.map((row) => row.s3_key)
}

/** Storage keys of failed backups created since `since`: their files are deleted again until then. */
export async function recentFailedKeys(db: Db, since: Date): Promise<string[]> {
  const rows = await db
    .selectFrom('backups')
    .select('s3_key')
    .where('status', '=', 'failed')
    .where('created_at', '>=', since)
    .execute()
  return rows.map((row) => row.s3_key)
}

/** Takes a job's lock for this transaction; false when another instance holds it. */
export async function tryJobLock(trx: Transaction<CloudDB>, job: string): Promise<boolean> {
  const { rows } = await sql<{
    locked: boolean
  }>`select pg_try_advisory_xact_lock(hashtext(${job})) as locked`.execute(trx)
  return rows[0]?.locked === true
}

export function lastRunOf(db: Db, job: string): Promise<Date | undefined> {
  return db
    .selectFrom('cleanup_runs')
    .select('last_run_at')
    .where('job', '=', job)
    .executeTakeFirst()
    .then((row) => row?.last_run_at)
}

export async function recordRun(db: Db, job: string, at: Date): Promise<void> {
  await db
    .insertInto('cleanup_runs')
    .values({ job, last_run_at: at })
    .onConflict((oc) => oc.column('job').doUpdateSet({ last_run_at: at }))
    .execute()
}
