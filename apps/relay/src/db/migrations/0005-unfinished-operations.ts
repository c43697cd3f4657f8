import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  // A backup writes its row when it starts and removes it when it ends: a row found at start belongs to
  // one the relay was stopped in. It stays until the cloud's record of it is released.
  await db.schema
    .createTable('unfinished_operations')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('kind', 'text', (col) => col.notNull().check(sql`kind in ('backup', 'restore')`))
    .addColumn('trigger', 'text')
    .addColumn('stage', 'text', (col) => col.notNull())
    .addColumn('backup_id', 'text')
    .addColumn('filename', 'text')
    .addColumn('started_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .addColumn('interrupted_at', 'text')
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('unfinished_operations').execute()
}
