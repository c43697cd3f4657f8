import { setTimeout as delay } from 'node:timers/promises'
import { AppError } from '@relay/contracts'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/database.js'
import { isConnectionError, UNAVAILABLE_MESSAGE } from './connection-faults.js'

const LOCK_KEY = 4242

/** Polls (without deciding anything by time) until `probe` holds. */
async function until(probe: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 2000; attempt++) {
    if (await probe()) {
      return
    }
    await delay(10)
  }
  throw new Error(`gave up waiting for ${what}`)
}

describe.skipIf(!databaseKinds.includes('postgres'))('a PostgreSQL connection lost under a statement', () => {
  let database: TestDatabase
  let admin: pg.Client

  beforeAll(async () => {
    database = await createTestDatabase('postgres')
    admin = new pg.Client({ connectionString: database.url })
    await admin.connect()
  })

  afterAll(async () => {
    await admin?.end()
    await database?.dispose()
  })

  /** Backends of the pool that wait for the lock the admin connection holds. */
  async function waiting(): Promise<number[]> {
    const { rows } = await admin.query<{ pid: number }>(
      `select pid from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`,
    )
    return rows.map((row) => row.pid)
  }

  /**
   * Runs `statement` while the admin connection holds an advisory lock it needs, terminates the
   * backend running it, and lets `afterKill` decide when the lock is released.
   */
  async function killUnder<T>(
    statement: () => Promise<T>,
    afterKill: (outcome: Promise<unknown>, victim: number) => Promise<void>,
  ) {
    await admin.query('select pg_advisory_lock($1)', [LOCK_KEY])
    try {
      const outcome = statement().then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      )
      await until(async () => (await waiting()).length === 1, 'the statement to wait for the lock')
      const [victim] = await waiting()
      await admin.query('select pg_terminate_backend($1)', [victim])
      await afterKill(outcome, victim as number)
      await admin.query('select pg_advisory_unlock($1)', [LOCK_KEY])
      return await outcome
    } finally {
      await admin.query('select pg_advisory_unlock_all()')
    }
  }

  const lockedRead = () =>
    database.db.selectNoFrom(sql<string>`pg_advisory_xact_lock_shared(${LOCK_KEY})::text`.as('locked')).execute()

  it('runs a read again on a fresh connection', async () => {
    const outcome = await killUnder(lockedRead, async (_outcome, victim) => {
      // The repeat waits for the same lock on another backend: proof that it was sent again.
      await until(async () => (await waiting()).some((pid) => pid !== victim), 'the read to be sent again')
    })
    expect(outcome).toEqual({ ok: true, value: [{ locked: '' }] })
  })

  /** Settled while the lock is still held: nothing was sent again (a repeat would wait for the lock). */
  const settledWithoutRepeat = async (outcome: Promise<unknown>) => {
    await outcome
    expect(await waiting()).toEqual([])
  }

  it('does not repeat raw SQL, which may have had an effect, and answers UNAVAILABLE', async () => {
    const outcome = await killUnder(
      () => sql`select pg_advisory_xact_lock_shared(${LOCK_KEY})`.execute(database.db),
      settledWithoutRepeat,
    )
    expect(outcome.ok).toBe(false)
    const { error } = outcome as { error: unknown }
    expect(error).toBeInstanceOf(AppError)
    expect(error).toMatchObject({ code: 'UNAVAILABLE', status: 503, message: UNAVAILABLE_MESSAGE })
    expect(isConnectionError((error as AppError).cause)).toBe(true)
  })

  it('fails a transaction once, cleanly, without repeating its reads', async () => {
    const outcome = await killUnder(
      () =>
        database.db.transaction().execute(async (trx) => {
          await trx.selectNoFrom(sql<string>`pg_advisory_xact_lock_shared(${LOCK_KEY})::text`.as('locked')).execute()
          return 'committed'
        }),
      settledWithoutRepeat,
    )
    expect(outcome.ok).toBe(false)
    // The rollback on the dead connection is not the error the caller sees.
    expect((outcome as { error: unknown }).error).toMatchObject({ code: 'UNAVAILABLE', message: UNAVAILABLE_MESSAGE })
  })

  it('keeps serving after every connection of the pool is terminated while idle', async () => {
    // Fill the pool with idle connections, then end them all from the server side.
    await Promise.all(Array.from({ length: 5 }, () => sql`select pg_sleep(0.05)`.execute(database.db)))
    await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    )
    const rows = await database.db.selectNoFrom(sql<number>`1`.as('one')).execute()
    expect(rows).toEqual([{ one: 1 }])
  })

  it('keeps its own errors apart from lost connections', async () => {
    const failure = await sql`select * from no_such_table`.execute(database.db).catch((err: unknown) => err)
    expect(failure).not.toBeInstanceOf(AppError)
    expect(failure).toMatchObject({ code: '42P01' })
    expect(isConnectionError(failure)).toBe(false)
  })
})

describe('a closed embedded database', () => {
  it('answers UNAVAILABLE rather than an internal error', async () => {
    const database = await createTestDatabase('pglite')
    await database.close()
    const failure = await database.db
      .selectFrom('users')
      .select('id')
      .execute()
      .catch((err: unknown) => err)
    expect(failure).toMatchObject({ code: 'UNAVAILABLE', message: UNAVAILABLE_MESSAGE })
    await database.dispose().catch(() => {})
  })
})
