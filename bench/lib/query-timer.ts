import type { KyselyPlugin } from 'kysely'
import type { RelayDatabase } from '../../apps/relay/src/db/database.ts'

/** The SQL one call ran: its statements' time from Kysely's hand-off to their results, and how many. */
export type SqlSpent = { ms: number; statements: number }

/** One call's wall time and the SQL run inside it. */
export type TimedCall = { ms: number; sql: SqlSpent }

export type QueryTimer = {
  /** `database` with every statement of its Kysely instance timed; give it to the app as its database. */
  wrap(database: RelayDatabase): RelayDatabase
  /** Runs `call` and returns its wall time and the SQL run while it ran: parts of one and the same call. */
  time(call: () => Promise<unknown>): Promise<TimedCall>
}

/**
 * Times the statements an app runs, inside the call that runs them, so a note can say how much of one
 * request went to SQL without measuring the query apart (a copy measured apart can drift from what the
 * service runs). Meant for one call at a time with nothing else querying.
 */
export function createQueryTimer(): QueryTimer {
  const started = new WeakMap<object, number>()
  let spent: SqlSpent = { ms: 0, statements: 0 }
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      started.set(queryId, performance.now())
      return node
    },
    async transformResult({ result, queryId }) {
      const since = started.get(queryId)
      if (since !== undefined) {
        spent = { ms: spent.ms + performance.now() - since, statements: spent.statements + 1 }
      }
      return result
    },
  }
  return {
    wrap(database) {
      const db = database.db.withPlugin(plugin)
      return {
        db,
        get sqlite() {
          return database.sqlite
        },
        file: database.file,
        ping: () => database.ping(),
        replaceFile: (stagedFile) => database.replaceFile(stagedFile),
        close: () => database.close(),
      }
    },
    async time(call) {
      spent = { ms: 0, statements: 0 }
      const begun = performance.now()
      await call()
      const ms = performance.now() - begun
      return { ms, sql: spent }
    },
  }
}
