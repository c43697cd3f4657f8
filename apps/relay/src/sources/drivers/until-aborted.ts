/**
 * Settles with `work`, or rejects with `abortError()` as soon as `signal` aborts, so a driver
 * reports its own reason instead of a bare AbortError. `work` itself is not cancelled.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, abortError: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError())
    if (signal.aborted) {
      onAbort()
      return
    }
    signal.addEventListener('abort', onAbort, { once: true })
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
