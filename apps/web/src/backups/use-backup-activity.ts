import type { RestoreBody } from '@relay/contracts'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useState } from 'react'
import { ApiError, api } from '../api'
import { isFinished } from './labels'
import { backupKeys, useBackupOperation, useBackupOperations } from './queries'
import { startVerification } from './verification-queries'

/**
 * The backup or restore this page shows: one it started, or one already running when it opened (a
 * scheduled backup, or one started before a reload). Only one runs at a time on the relay.
 */
export function useBackupActivity() {
  const queryClient = useQueryClient()
  const [trackedId, setTrackedId] = useState<string | null>(null)
  const [startedHereId, setStartedHereId] = useState<string | null>(null)
  const dismissed = useRef(new Set<string>())
  const handled = useRef(new Set<string>())

  const tracked = useBackupOperation(trackedId)
  const operation = tracked.data
  const isRunning = trackedId !== null && !tracked.isError && !(operation && isFinished(operation))
  const operations = useBackupOperations(!isRunning)
  const runningElsewhere = operations.data?.operations.find(
    (candidate) => !isFinished(candidate) && !dismissed.current.has(candidate.id),
  )

  useEffect(() => {
    if (runningElsewhere && !isRunning && runningElsewhere.id !== trackedId) {
      setTrackedId(runningElsewhere.id)
    }
  }, [runningElsewhere, isRunning, trackedId])

  useEffect(() => {
    if (!operation || !isFinished(operation) || handled.current.has(operation.id)) {
      return
    }
    handled.current.add(operation.id)
    // After a restore the relay runs on another database: everything any page shows may have changed.
    const restored = operation.kind === 'restore' && operation.stage === 'done'
    void (restored ? queryClient.invalidateQueries() : queryClient.invalidateQueries({ queryKey: backupKeys.all }))
  }, [operation, queryClient])

  const follow = (operationId: string) => {
    if (trackedId) {
      dismissed.current.add(trackedId)
    }
    setTrackedId(operationId)
    setStartedHereId(operationId)
  }
  const onRefused = (error: Error) => {
    // Another backup or restore got there first: show that one instead.
    if (error instanceof ApiError && error.code === 'CONFLICT') {
      void queryClient.invalidateQueries({ queryKey: backupKeys.operations })
    }
  }

  const backUp = useMutation({
    mutationFn: () => api.startBackup(),
    onSuccess: ({ operationId }) => follow(operationId),
    onError: onRefused,
  })
  const restore = useMutation({
    mutationFn: ({ backupId, body }: { backupId: string; body: RestoreBody }) => api.restoreBackup(backupId, body),
    onSuccess: ({ operationId }) => follow(operationId),
    onError: onRefused,
  })
  const verify = useMutation({
    mutationFn: (backupId: string) => startVerification(backupId),
    onSuccess: ({ operationId }) => follow(operationId),
    onError: onRefused,
  })

  return {
    operation: trackedId === null ? undefined : operation,
    /** Following the progress failed (the relay restarted and forgot it, or cannot be reached). */
    progressError: trackedId === null ? null : tracked.error,
    /** Started from this page, rather than found running: the page takes the user to its progress. */
    isStartedHere: operation !== undefined && operation.id === startedHereId,
    isBusy: isRunning || backUp.isPending || restore.isPending || verify.isPending,
    backUp,
    restore,
    verify,
    dismiss() {
      if (trackedId) {
        dismissed.current.add(trackedId)
      }
      setTrackedId(null)
      backUp.reset()
    },
  }
}

export type BackupActivity = ReturnType<typeof useBackupActivity>
