import { type Kysely, sql } from 'kysely'

/**
 * When each periodic job last finished, one row per job. Timers live in processes that restart;
 * this row lets any instance tell whether a job is overdue, so a restart never postpones it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cleanup_runs')
    .addColumn('job', 'varchar(64)', (col) => col.primaryKey())
    .addColumn('last_run_at', 'timestamptz', (col) => col.notNull())
    .execute()
  // The hourly release job deletes the files of the last day's failed backups again.
  await db.schema
    .createIndex('backups_failed')
    .on('backups')
    .column('created_at')
    .where(sql.ref('status'), '=', 'failed')
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('backups_failed').execute()
  await db.schema.dropTable('cleanup_runs').execute()
}
