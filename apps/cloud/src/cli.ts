import { ConfigError, migrateToLatest } from '@relay/server-kit'
import { loadConfig } from './config.js'
import { openDatabase } from './db/database.js'
import { migrations } from './db/migrations/index.js'

/** Operator commands: `npm run cloud -- <command>`. */
const commands: Record<string, { help: string; run(args: string[]): Promise<void> }> = {
  'db:migrate': {
    help: 'apply pending database migrations and exit',
    async run() {
      const config = loadConfig(process.env)
      const database = await openDatabase(config)
      try {
        const applied = await migrateToLatest(database.db, migrations)
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date')
      } finally {
        await database.close()
      }
    },
  },
}

const [name, ...args] = process.argv.slice(2)
const command = name ? commands[name] : undefined
if (!command) {
  console.log('usage: npm run cloud -- <command>\n')
  for (const [commandName, { help }] of Object.entries(commands)) {
    console.log(`  ${commandName.padEnd(14)} ${help}`)
  }
  process.exit(name ? 2 : 0)
}
try {
  await command.run(args)
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err instanceof Error ? err.message : err)
  process.exit(1)
}
