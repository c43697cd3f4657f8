import { runServer } from '@relay/server-kit'
import { createApp } from './app.js'
import { loadConfig } from './config.js'

await runServer(loadConfig, createApp)
