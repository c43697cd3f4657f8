import { runServer, StartupError } from '@relay/server-kit'
import { createApp } from './app.js'
import { loadConfig } from './config.js'
import { damagedDatabaseMessage } from './db/database.js'

await runServer(loadConfig, async (config) => {
  try {
    return await createApp(config)
  } catch (err) {
    const damaged = damagedDatabaseMessage(err, config.dataDir)
    throw damaged ? new StartupError(damaged, { cause: err }) : err
  }
})
