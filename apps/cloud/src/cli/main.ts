import { ConfigError } from '@relay/server-kit'
import { loadConfig } from '../config.js'
import { runCli } from './run.js'

/** Operator commands: `npm run cloud -- <command>`. */
try {
  process.exitCode = await runCli(process.argv.slice(2), {
    config: loadConfig(process.env),
    out: (line) => console.log(line),
  })
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err instanceof Error ? err.message : err)
  process.exitCode = 1
}
