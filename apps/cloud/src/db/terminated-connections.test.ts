import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type Caller, newCaller } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'
import { databaseKinds } from '../../test/database.js'
import { UNAVAILABLE_MESSAGE } from './connection-faults.js'

const generous = { capacity: 1_000_000, refillEvery: 1 }

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

type Answer = { route: string; status: number; body: { code?: string; error?: string } }

describe.skipIf(!databaseKinds.includes('postgres'))('the cloud while its database connections are terminated', () => {
  let cloud: TestCloud
  let caller: Caller
  let admin: pg.Client

  beforeAll(async () => {
    cloud = await startTestCloud('postgres', {
      overrides: { rateLimitPolicies: { dashboard: generous, backup: generous } },
    })
    caller = await newCaller(cloud)
    admin = new pg.Client({ connectionString: cloud.database.url })
    await admin.connect()
  })

  afterAll(async () => {
    await admin?.end()
    await cloud?.close()
  })

  const routes: [string, () => Promise<Response>][] = [
    ['status', () => caller.call('GET', '/cloud-backups/status')],
    ['list', () => caller.call('GET', '/cloud-backups/list')],
    ['settings', () => caller.call('POST', '/cloud-backups/settings', { enabled: true })],
  ]

  async function ask([route, send]: [string, () => Promise<Response>]): Promise<Answer> {
    const res = await send()
    return { route, status: res.status, body: (await res.json()) as Answer['body'] }
  }

  it('answers 503 UNAVAILABLE at worst, stays up, and serves again afterwards', async () => {
    for (const route of routes) {
      expect((await ask(route)).status, route[0]).toBe(200)
    }

    const answers: Answer[] = []
    let stop = false
    const workers = Array.from({ length: 6 }, async (_, worker) => {
      for (let turn = worker; !stop; turn++) {
        answers.push(await ask(routes[turn % routes.length] as (typeof routes)[number]))
      }
    })

    let terminated = 0
    for (let round = 0; round < 3; round++) {
      // Let requests run between the cuts, so that each one lands on connections in use.
      const seen = answers.length
      while (answers.length < seen + 20) {
        await delay(5)
      }
      const { rows } = await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()`,
      )
      terminated += rows.length
    }
    const seen = answers.length
    while (answers.length < seen + 20) {
      await delay(5)
    }
    stop = true
    await Promise.all(workers)

    expect(terminated).toBeGreaterThan(0)
    const failures = answers.filter((answer) => answer.status !== 200)
    for (const failure of failures) {
      expect(failure).toMatchObject({
        status: 503,
        body: { success: false, code: 'UNAVAILABLE', error: UNAVAILABLE_MESSAGE },
      })
    }
    // Afterwards every route works again, in the same process.
    for (const route of routes) {
      expect((await ask(route)).status, route[0]).toBe(200)
    }
    const ready = await fetch(`${cloud.url}/readyz`)
    expect(await ready.json()).toMatchObject({ checks: { database: 'ok' } })
  })

  /** Backends of the cloud that wait for a lock the admin connection holds. */
  async function blocked(): Promise<number[]> {
    // Inside a transaction the statistics views keep their first snapshot: take a fresh one.
    await admin.query('select pg_stat_clear_snapshot()')
    const { rows } = await admin.query<{ pid: number }>(
      `select pid from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`,
    )
    return rows.map((row) => row.pid)
  }

  /** Sends a request while `lock` holds what it needs, terminates its backend, then lets the lock go. */
  async function cutMidStatement(lock: string, params: unknown[], route: (typeof routes)[number]) {
    await admin.query('begin')
    try {
      await admin.query(lock, params)
      const answer = ask(route)
      await until(async () => (await blocked()).length > 0, `${route[0]} to wait for the lock`)
      const victims = await blocked()
      await admin.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [victims])
      return { answer, victims }
    } catch (err) {
      await admin.query('rollback')
      throw err
    }
  }

  afterEach(async () => {
    // A failed test must not leave the lock behind for the next one (or for closing the app).
    await admin.query('rollback').catch(() => {})
  })

  it('answers 503 UNAVAILABLE for a write whose connection is cut under it', async () => {
    await ask(routes[2] as (typeof routes)[number])
    const { answer } = await cutMidStatement(
      'select 1 from backup_settings where user_id = $1 for update',
      [caller.id],
      routes[2] as (typeof routes)[number],
    )
    // Settled while the row is still locked: the write was not sent again.
    expect(await answer).toEqual({
      route: 'settings',
      status: 503,
      body: { success: false, code: 'UNAVAILABLE', error: UNAVAILABLE_MESSAGE },
    })
    await admin.query('rollback')
    expect((await ask(routes[2] as (typeof routes)[number])).status).toBe(200)
  })

  it('answers a read whose connection is cut under it from a fresh connection', async () => {
    const { answer, victims } = await cutMidStatement(
      'lock table backups in access exclusive mode',
      [],
      routes[1] as (typeof routes)[number],
    )
    // The read is sent again and waits for the same lock on another backend.
    await until(async () => (await blocked()).some((pid) => !victims.includes(pid)), 'the read to be sent again')
    await admin.query('commit')
    expect(await answer).toMatchObject({ route: 'list', status: 200 })
  })
})
