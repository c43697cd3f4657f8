import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // The last verification of each cloud backup: `checked_at` is when it ran, `verified_at` when one
  // last succeeded (kept through a later failure). Rows of backups the cloud no longer lists are pruned.
  await db.schema
    .createTable('backup_verifications')
    .addColumn('backup_id', 'text', (col) => col.primaryKey())
    .addColumn('verified_at', 'text')
    .addColumn('outcome', 'text', (col) => col.notNull().check(sql`outcome in ('ok', 'failed')`))
    .addColumn('error', 'text')
    .addColumn('checked_at', 'text', (col) => col.notNull())
    .execute()
  // The scheduler asks for the latest check of any backup.
  await db.schema
    .createIndex('backup_verifications_checked_at')
    .on('backup_verifications')
    .column('checked_at')
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('backup_verifications').execute()
}
