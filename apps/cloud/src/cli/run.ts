import { parseArgs } from 'node:util'
import { AppError } from '@relay/contracts'
import { migrateToLatest } from '@relay/server-kit'
import type { CloudConfig } from '../config.js'
import { type CloudDatabase, openDatabase } from '../db/database.js'
import { migrations } from '../db/migrations/index.js'
import { accountCommands } from './account-commands.js'
import { backupCommands } from './backup-commands.js'
import { type CliContext, type Command, UsageError } from './command.js'
import { databaseCommands } from './database-commands.js'
import { oauthCommands } from './oauth-commands.js'

const commands: Command[] = [...databaseCommands, ...backupCommands, ...accountCommands, ...oauthCommands]

export type CliOptions = {
  config: CloudConfig
  out(line: string): void
  /** An already opened database (tests); otherwise the configured one is opened and closed. */
  database?: CloudDatabase
}

/** Runs one operator command; returns the process exit code (0 done, 1 failed, 2 usage). */
export async function runCli(argv: string[], { config, out, database: given }: CliOptions): Promise<number> {
  const match = commands
    .filter((command) => command.name.split(' ').every((word, i) => argv[i] === word))
    .sort((a, b) => b.name.length - a.name.length)[0]
  if (!match) {
    if (argv.length > 0) {
      out(`unknown command: ${argv.join(' ')}\n`)
    }
    printUsage(out)
    return argv.length > 0 ? 2 : 0
  }

  let opened: CloudDatabase | undefined
  const context: CliContext = {
    config,
    out,
    async database() {
      if (given) {
        return given
      }
      if (!opened) {
        opened = await openDatabase(config)
        await migrateToLatest(opened.db, migrations)
      }
      return opened
    },
  }
  try {
    const { values, positionals } = parseArgs({
      args: argv.slice(match.name.split(' ').length),
      options: match.options ?? {},
      allowPositionals: true,
      strict: true,
    })
    await match.run(context, values, positionals)
    return 0
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      out(`${(err as Error).message}\nusage: npm run cloud -- ${match.usage}`)
      return 2
    }
    if (err instanceof AppError) {
      out(`error: ${err.message}`)
      return 1
    }
    throw err
  } finally {
    await opened?.close()
  }
}

function printUsage(out: (line: string) => void) {
  out('usage: npm run cloud -- <command>\n')
  for (const command of commands) {
    out(`  ${command.usage.padEnd(58)} ${command.help}`)
  }
}
