import { notificationLimits } from '@relay/contracts'

export type AckBatcherOptions = {
  send: (ids: string[]) => Promise<unknown>
  /** Gathers the ids shown close together into one request. */
  delayMs?: number
  /** After a failed request the same ids are sent again this much later. */
  retryMs?: number
  batchSize?: number
}

/** Acknowledges shown notifications in batches; ids whose request fails are retried, never lost. */
export function createAckBatcher({
  send,
  delayMs = 250,
  retryMs = 5000,
  batchSize = notificationLimits.ackMaxIds,
}: AckBatcherOptions) {
  const pending = new Set<string>()
  let timer: ReturnType<typeof setTimeout> | undefined
  let sending = false

  const schedule = (ms: number) => {
    if (timer === undefined && !sending) {
      timer = setTimeout(() => {
        timer = undefined
        void flush()
      }, ms)
    }
  }

  async function flush(): Promise<void> {
    if (sending) {
      return
    }
    sending = true
    let failed = false
    try {
      while (pending.size > 0 && !failed) {
        const batch = [...pending].slice(0, batchSize)
        for (const id of batch) {
          pending.delete(id)
        }
        try {
          await send(batch)
        } catch {
          for (const id of batch) {
            pending.add(id)
          }
          failed = true
        }
      }
    } finally {
      sending = false
    }
    if (pending.size > 0) {
      schedule(failed ? retryMs : delayMs)
    }
  }

  return {
    add(ids: readonly string[]) {
      for (const id of ids) {
        pending.add(id)
      }
      if (pending.size > 0) {
        schedule(delayMs)
      }
    },
    flush,
    /** Ids still waiting to be acknowledged. */
    get pendingCount() {
      return pending.size
    },
  }
}

export type AckBatcher = ReturnType<typeof createAckBatcher>
