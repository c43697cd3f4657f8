/**
 * Polls `ready` every 100 ms until it answers true; a throw counts as "not yet" (a server that is not
 * listening). Fails with `what` once `timeoutMs` has passed.
 */
export async function waitFor(ready: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      if (await ready()) {
        return
      }
    } catch {
      // not yet
    }
    if (Date.now() > deadline) {
      throw new Error(`${what} did not happen within ${timeoutMs} ms`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
