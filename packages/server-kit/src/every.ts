type JobLog = { error(obj: object, msg: string): void }

export type EveryOptions = {
  log: JobLog
  signal: AbortSignal
  /** Delay before the first run; defaults to one interval. */
  firstRunAfter?: number
}

/**
 * Runs `task` every `intervalMs` until `signal` aborts. Runs never overlap: the next one is timed
 * from the end of the previous. A failed run is logged and the schedule goes on.
 */
export function every(intervalMs: number, task: () => Promise<unknown>, { log, signal, firstRunAfter }: EveryOptions) {
  let timer: NodeJS.Timeout | undefined
  const schedule = (delay: number) => {
    if (signal.aborted) {
      return
    }
    timer = setTimeout(async () => {
      try {
        await task()
      } catch (err) {
        log.error({ err }, 'scheduled job failed')
      }
      schedule(intervalMs)
    }, delay)
    // A pending job never keeps the process alive on its own.
    timer.unref()
  }
  signal.addEventListener('abort', () => clearTimeout(timer), { once: true })
  schedule(firstRunAfter ?? intervalMs)
}
