// Process entry of a benchmarked cloud instance: what apps/cloud/src/main.ts runs, with the per-user rate
// limits lifted so that the limiter never decides a figure. The cloud reads no setting for them (only the
// app's `rateLimitPolicies` override), so the bench starts this instead of main.ts; nothing else differs.
import { runServer } from '@relay/server-kit'
import { createApp } from '../../apps/cloud/src/app.ts'
import { loadConfig } from '../../apps/cloud/src/config.ts'

const unlimited = { capacity: 1_000_000, refillEvery: 1000 }

process.on('unhandledRejection', (reason) => {
  console.error('Unhandled promise rejection; the cloud keeps running:', reason)
})

await runServer(loadConfig, (config) =>
  createApp(config, { rateLimitPolicies: { dashboard: unlimited, backup: unlimited } }),
)
