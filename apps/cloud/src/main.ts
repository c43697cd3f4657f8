import { ConfigError, closeOnSignals } from '@relay/server-kit'
import { createApp } from './app.js'
import { loadConfig } from './config.js'

try {
  const config = loadConfig(process.env)
  const app = await createApp(config)
  closeOnSignals(app)
  await app.listen({ port: config.port, host: config.host })
  app.log.info({ url: config.publicUrl }, 'cloud listening')
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err)
  process.exit(1)
}
