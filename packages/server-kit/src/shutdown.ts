type Closable = {
  close(): Promise<unknown>
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void }
}

/** Closes the app once on SIGINT or SIGTERM; a second signal exits at once. */
export function closeOnSignals(app: Closable, signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM']): void {
  let closing = false
  for (const signal of signals) {
    process.on(signal, () => {
      if (closing) {
        process.exit(1)
      }
      closing = true
      app.log.info({ signal }, 'shutting down')
      app.close().then(
        () => process.exit(0),
        (err: unknown) => {
          app.log.error({ err }, 'shutdown failed')
          process.exit(1)
        },
      )
    })
  }
}
