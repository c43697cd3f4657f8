import { randomUUID } from 'node:crypto'
import type { BackupOperation, BackupTrigger, OperationKind, OperationStage } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'

const kept = 20

/** Backups and restores as they run, newest first; the last few finished ones stay for the UI to read. */
export function createOperations(clock: Clock) {
  const operations = new Map<string, BackupOperation>()

  return {
    start(kind: OperationKind, trigger: BackupTrigger | null): BackupOperation {
      const operation: BackupOperation = {
        id: randomUUID(),
        kind,
        trigger,
        stage: 'queued',
        bytesDone: 0,
        bytesTotal: 0,
        backupId: null,
        filename: null,
        error: null,
        startedAt: clock.now().toISOString(),
        finishedAt: null,
      }
      operations.set(operation.id, operation)
      for (const id of [...operations.keys()].slice(0, Math.max(0, operations.size - kept))) {
        operations.delete(id)
      }
      return operation
    },

    /** An operation that ran before this process did (one the relay was stopped in), for the UI to read. */
    add(operation: BackupOperation): BackupOperation {
      operations.set(operation.id, operation)
      return operation
    },

    /** Moves an operation to `stage` with a fresh byte count. */
    stage(operation: BackupOperation, stage: OperationStage, bytesTotal = 0): void {
      Object.assign(operation, { stage, bytesDone: 0, bytesTotal })
    },

    progress(operation: BackupOperation, bytesDone: number, bytesTotal = operation.bytesTotal): void {
      Object.assign(operation, { bytesDone, bytesTotal })
    },

    finish(operation: BackupOperation, error?: string): void {
      Object.assign(operation, {
        stage: error === undefined ? 'done' : 'failed',
        error: error ?? null,
        finishedAt: clock.now().toISOString(),
      })
    },

    get: (id: string): BackupOperation | undefined => operations.get(id),
    list: (): BackupOperation[] => [...operations.values()].reverse(),
  }
}

export type Operations = ReturnType<typeof createOperations>
