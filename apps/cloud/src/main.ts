import { runServer } from '@relay/server-kit'
import { createApp } from './app.js'
import { loadConfig } from './config.js'

// A rejection nobody handled is a bug to fix, but ending the process for it would drop every request
// in flight on this instance (and, for a shared dependency failing, on all of them at once): report it
// and keep serving. Uncaught exceptions still end the process, since its state can no longer be trusted.
process.on('unhandledRejection', (reason) => {
  console.error('Unhandled promise rejection; the cloud keeps running:', reason)
})

await runServer(loadConfig, createApp)
