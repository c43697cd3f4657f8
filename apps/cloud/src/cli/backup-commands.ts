import { systemClock } from '@relay/server-kit'
import { checkObjectStore } from '../storage/store-identity.js'
import type { Command } from './command.js'
import { withServices } from './services.js'

export const backupCommands: Command[] = [
  {
    name: 'backups cleanup',
    usage: 'backups cleanup',
    help: 'run the daily backup cleanup now (expired and stale pending backups, with their files)',
    async run(context) {
      // It deletes files, so it must reach the store the database's backups are in, not a folder of its own.
      await checkObjectStore((await context.database()).db, context.config, systemClock)
      const result = await withServices(context, (services) => services.backups.cleanup())
      context.out(
        result.ran
          ? `removed ${result.total} backups: ${result.expired} expired, ${result.stalePending} stale pending`
          : 'another instance is running the cleanup right now; nothing done',
      )
    },
  },
]
