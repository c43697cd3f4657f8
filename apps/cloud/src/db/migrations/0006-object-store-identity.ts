import { type Kysely, sql } from 'kysely'

/**
 * Which object store holds this database's backups, recorded by the first instance that starts on it.
 * Every later start compares its own store with this row, so an instance with another store (its own
 * embedded folder, say) is refused instead of writing backups that the others cannot find.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('object_store')
    // One row: the key can only be true.
    .addColumn('singleton', 'boolean', (col) => col.primaryKey().defaultTo(true).check(sql`singleton`))
    .addColumn('identity', 'varchar(2048)', (col) => col.notNull())
    .addColumn('description', 'varchar(2048)', (col) => col.notNull())
    .addColumn('recorded_at', 'timestamptz', (col) => col.notNull())
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('object_store').execute()
}
