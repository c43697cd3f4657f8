import type { Command } from './command.js'
import { withServices } from './services.js'

export const backupCommands: Command[] = [
  {
    name: 'backups cleanup',
    usage: 'backups cleanup',
    help: 'run the daily backup cleanup now (expired and stale pending backups, with their files)',
    async run(context) {
      const result = await withServices(context, (services) => services.backups.cleanup())
      context.out(
        result.ran
          ? `removed ${result.total} backups: ${result.expired} expired, ${result.stalePending} stale pending`
          : 'another instance is running the cleanup right now; nothing done',
      )
    },
  },
]
