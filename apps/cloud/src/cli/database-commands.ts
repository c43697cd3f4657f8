import { migrateToLatest } from '@relay/server-kit'
import { openDatabase } from '../db/database.js'
import { migrations } from '../db/migrations/index.js'
import type { Command } from './command.js'

export const databaseCommands: Command[] = [
  {
    name: 'db:migrate',
    usage: 'db:migrate',
    help: 'apply pending database migrations and exit',
    async run({ config, out }) {
      const database = await openDatabase(config)
      try {
        const applied = await migrateToLatest(database.db, migrations)
        out(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date')
      } finally {
        await database.close()
      }
    },
  },
]
