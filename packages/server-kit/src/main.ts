import { ConfigError } from './env.js'
import { closeOnSignals } from './shutdown.js'

type Listenable = Parameters<typeof closeOnSignals>[0] & {
  listen(options: { port: number; host: string }): Promise<string>
}

/**
 * A start-up failure the operator can act on from its message alone (a damaged data file, say):
 * `runServer` prints just the message, like a bad configuration's.
 */
export class StartupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'StartupError'
  }
}

/**
 * The body of an app's main.ts: read the config, build the app, listen, close on signals.
 * A bad configuration or a `StartupError` prints its one message and exits 1, without a stack trace.
 */
export async function runServer<Config extends { port: number; host: string }>(
  loadConfig: (env: NodeJS.ProcessEnv) => Config,
  createApp: (config: Config) => Promise<Listenable>,
): Promise<void> {
  try {
    const config = loadConfig(process.env)
    const app = await createApp(config)
    closeOnSignals(app)
    await app.listen({ port: config.port, host: config.host })
  } catch (err) {
    console.error(err instanceof ConfigError || err instanceof StartupError ? err.message : err)
    process.exit(1)
  }
}
