import { randomUUID } from 'node:crypto'
import type { BackupOperation, BackupTrigger, OperationKind, OperationStage } from '@relay/contracts'
import type { Clock } from '@relay/server-kit'

const kept = 20

/** Backups and restores as they run, newest first; the last few finished ones stay for the UI to read. */
export function createOperations(clock: Clock) {
  const operations = new Map<string, BackupOperation>()
  /** Milliseconds spent in each stage so far, and when the current one began: for the log, not the UI. */
  const timings = new WeakMap<BackupOperation, { spent: Partial<Record<OperationStage, number>>; since: number }>()

  function time(operation: BackupOperation): void {
    const now = performance.now()
    const timing = timings.get(operation)
    if (timing) {
      timing.spent[operation.stage] = Math.round((timing.spent[operation.stage] ?? 0) + now - timing.since)
      timing.since = now
    } else {
      timings.set(operation, { spent: {}, since: now })
    }
  }

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
      time(operation)
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
      time(operation)
      Object.assign(operation, { stage, bytesDone: 0, bytesTotal })
    },

    progress(operation: BackupOperation, bytesDone: number, bytesTotal = operation.bytesTotal): void {
      Object.assign(operation, { bytesDone, bytesTotal })
    },

    finish(operation: BackupOperation, error?: string): void {
      time(operation)
      Object.assign(operation, {
        stage: error === undefined ? 'done' : 'failed',
        error: error ?? null,
        finishedAt: clock.now().toISOString(),
      })
    },

    /** Milliseconds each stage took, in the order they ran; complete once the operation finished. */
    stageTimes: (operation: BackupOperation): Partial<Record<OperationStage, number>> =>
      timings.get(operation)?.spent ?? {},

    /** Forgets an operation that turned out to have nothing to do. */
    drop: (operation: BackupOperation): void => {
      operations.delete(operation.id)
    },

    get: (id: string): BackupOperation | undefined => operations.get(id),
    list: (): BackupOperation[] => [...operations.values()].reverse(),
  }
}

export type Operations = ReturnType<typeof createOperations>
