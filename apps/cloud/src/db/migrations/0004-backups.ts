import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('backup_settings')
    .addColumn('user_id', 'uuid', (col) => col.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('enabled', 'boolean', (col) => col.notNull())
    .addColumn('frequency', 'varchar(16)', (col) =>
      col.notNull().check(sql`frequency in ('daily', 'weekly', 'monthly')`),
    )
    .addColumn('retention_days', 'integer', (col) => col.notNull().check(sql`retention_days between 1 and 365`))
    .addColumn('include_keys', 'boolean', (col) => col.notNull())
    .addColumn('include_identity', 'boolean', (col) => col.notNull())
    .addColumn('include_frame_engine', 'boolean', (col) => col.notNull())
    .addColumn('last_backup', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull())
    .execute()

  // A relay's backups belong to the user who first backed it up.
  await db.schema
    .createTable('backend_owners')
    .addColumn('backend_id', 'varchar(255)', (col) => col.primaryKey())
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('claimed_at', 'timestamptz', (col) => col.notNull())
    .execute()

  await db.schema
    .createTable('backups')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('backend_id', 'varchar(255)', (col) => col.notNull())
    .addColumn('filename', 'varchar(255)', (col) => col.notNull())
    .addColumn('s3_key', 'varchar(500)', (col) => col.notNull().unique())
    .addColumn('uncompressed_size', 'bigint', (col) => col.notNull().check(sql`uncompressed_size >= 0`))
    .addColumn('compressed_size', 'bigint', (col) => col.notNull().check(sql`compressed_size >= 0`))
    .addColumn('sha256', 'char(64)')
    .addColumn('status', 'varchar(50)', (col) => col.notNull().check(sql`status in ('pending', 'completed', 'failed')`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('backups_user_created').on('backups').columns(['user_id', 'created_at desc']).execute()
  await db.schema
    .createIndex('backups_user_backend_created')
    .on('backups')
    .columns(['user_id', 'backend_id', 'created_at desc'])
    .execute()
  await db.schema
    .createIndex('backups_expiry')
    .on('backups')
    .column('expires_at')
    .where(sql.ref('expires_at'), 'is not', null)
    .execute()
  await db.schema
    .createIndex('backups_pending')
    .on('backups')
    .column('created_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('backups').execute()
  await db.schema.dropTable('backend_owners').execute()
  await db.schema.dropTable('backup_settings').execute()
}
