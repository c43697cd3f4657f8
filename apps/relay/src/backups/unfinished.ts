import type { BackupOperation } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'
import type { Kysely, Selectable } from 'kysely'
import { type HeldRows, holdRows } from '../db/database.js'
import type { RelayDB, UnfinishedOperationsTable } from '../db/schema.js'

export type UnfinishedOperation = Selectable<UnfinishedOperationsTable>

/**
 * The backups in progress, on disk: written when one starts and at each step that matters after a crash
 * (its stage, the cloud record it made), removed when it ends. A row found at start is a backup the
 * relay was stopped in; it stays, marked interrupted, until the cloud record it made is released.
 */
export function createUnfinishedOperations({ db, clock }: { db: Kysely<RelayDB>; clock: Clock }) {
  const now = () => clock.now().toISOString()
  const progressOf = (operation: BackupOperation) => ({
    stage: operation.stage,
    backup_id: operation.backupId,
    filename: operation.filename,
    updated_at: now(),
  })

  return {
    async begin(operation: BackupOperation): Promise<void> {
      await db
        .insertInto('unfinished_operations')
        .values({
          id: operation.id,
          kind: operation.kind,
          trigger: operation.trigger,
          started_at: operation.startedAt,
          interrupted_at: null,
          ...progressOf(operation),
        })
        .execute()
    },

    /** Writes the operation's present stage, cloud record and file name. */
    async update(operation: BackupOperation): Promise<void> {
      await db.updateTable('unfinished_operations').set(progressOf(operation)).where('id', '=', operation.id).execute()
    },

    async end(id: string): Promise<void> {
      await db.deleteFrom('unfinished_operations').where('id', '=', id).execute()
    },

    /** Rows of operations no start has seen yet: each one was running when the relay stopped. */
    unseen: (): Promise<UnfinishedOperation[]> =>
      db
        .selectFrom('unfinished_operations')
        .selectAll()
        .where('interrupted_at', 'is', null)
        .orderBy('started_at')
        .execute(),

    async markInterrupted(id: string): Promise<void> {
      await db.updateTable('unfinished_operations').set({ interrupted_at: now() }).where('id', '=', id).execute()
    },

    /**
     * Every row as it is now, to replace those of a restored database: the backup holds the row of the
     * backup that made it, still running when the database was copied, and left in, the next start
     * would report that finished backup as interrupted.
     */
    hold: (): Promise<HeldRows> => holdRows(db, 'unfinished_operations'),

    /** Interrupted operations whose cloud record is still to be released. */
    awaitingRelease: (): Promise<UnfinishedOperation[]> =>
      db
        .selectFrom('unfinished_operations')
        .selectAll()
        .where('interrupted_at', 'is not', null)
        .where('backup_id', 'is not', null)
        .orderBy('started_at')
        .execute(),
  }
}

export type UnfinishedOperations = ReturnType<typeof createUnfinishedOperations>
