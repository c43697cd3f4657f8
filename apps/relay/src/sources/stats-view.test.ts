import path from 'node:path'
import { type CollectorType, excludedCollectorType } from '@relay/contracts'
import { createTestClock, fuzzCheck, tempDir } from '@relay/testkit'
import SQLite from 'better-sqlite3'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { startRelay, testConfig } from '../../test/app.js'
import { createApp, type RelayApp } from '../app.js'
import { healthInput } from '../dashboard/collector-view.js'
import { collectorStats } from '../dashboard/health.js'
import { openDatabase, type RelayDatabase } from '../db/database.js'
import type { CollectorDriver, Reading } from './drivers/types.js'
import { until } from './local-servers.js'
import * as repo from './repo.js'

/** What the next fetch of a collector gives: these sensors, or a failure. */
type Scripted = { ok: true; sensors: string[] } | { ok: false }

/**
 * Collector drivers whose fetch waits until the test says what it gives, so every outcome is
 * recorded at a known point. The poll rate is long: a collector fetches again only when restarted.
 */
function scriptedDrivers() {
  const waiting = new Map<string, (next: Scripted) => void>()
  const reading = (id: string): Reading => ({ externalId: id, name: id, unit: null, value: 1 })
  const collector = ({ id }: { id: string }): CollectorDriver => ({
    fetch: (signal) =>
      new Promise<Reading[]>((resolve, reject) => {
        waiting.set(id, (next) => {
          waiting.delete(id)
          if (next.ok) {
            resolve(next.sensors.map(reading))
          } else {
            reject(new Error('connect ECONNREFUSED'))
          }
        })
        signal.addEventListener(
          'abort',
          () => {
            waiting.delete(id)
            reject(signal.reason)
          },
          { once: true },
        )
      }),
    close: async () => {},
  })
  const drivers = {
    collector,
    stream: () => {
      throw new Error('no streams here')
    },
  }
  return { drivers, waiting }
}

type Relay = { app: RelayApp; db: RelayDatabase['db'] }

/** The statistics computed as they were before they were kept in memory: from the rows, every time. */
async function recomputed({ app, db }: Relay) {
  const { runtime } = app.services
  const { listed, healthy } = await repo.findCollectorHealth(db)
  const polling = (await repo.listCollectors(db)).filter(
    (row) => row.collector_type !== excludedCollectorType && runtime.isPolling(row.id),
  )
  const states = polling.map((row) => runtime.collectorHealth(row.id)?.state)
  return collectorStats(
    listed.map((row) => healthInput(row, runtime.isUnlocked(row))),
    {
      active: polling.length,
      failing: states.filter((state) => state === 'failing').length,
      degraded: states.filter((state) => state === 'degraded').length,
    },
    healthy,
  )
}

const types = ['Virtual', 'Host', excludedCollectorType] as const
const settingsOf = (type: CollectorType) => (type === 'Virtual' ? { sensorCount: 1 } : {})
const sensorNames = ['a', 'b', 'c', 'd', 'e', 'f']
const password = 'correct horse'

type Step =
  | { op: 'create'; type: CollectorType; locked: boolean }
  | { op: 'update'; at: number; type: CollectorType | null }
  | { op: 'delete' | 'start' | 'stop' | 'lock' | 'unlock'; at: number }
  | { op: 'outcome'; at: number; next: Scripted }

const at = fc.nat({ max: 50 })
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('create' as const), type: fc.constantFrom(...types), locked: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('update' as const), at, type: fc.option(fc.constantFrom(...types)) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), at }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('start' as const), at }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('stop' as const), at }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('lock' as const, 'unlock' as const), at }) },
  {
    weight: 12,
    arbitrary: fc.record({
      op: fc.constant('outcome' as const),
      at,
      next: fc.oneof(
        fc.record({ ok: fc.constant(true as const), sensors: fc.subarray(sensorNames) }),
        fc.constant({ ok: false as const }),
      ),
    }),
  },
)

async function run(steps: Step[]) {
  const folder = tempDir('relay-stats-')
  const database = openDatabase(folder.path)
  const { drivers, waiting } = scriptedDrivers()
  const app = await createApp(testConfig(folder.path, { RELAY_WEB_DIR: folder.path }), {
    database,
    drivers,
    clock: createTestClock(),
  })
  const relay = { app, db: database.db }
  const { sources, runtime } = app.services
  const ids: string[] = []
  const pick = (index: number) => ids[index % ids.length] as string
  /** A restarted poller fetches at once: wait until that fetch waits for its outcome. */
  const fetching = (id: string) =>
    until(
      async () => waiting.has(id) || !runtime.isPolling(id),
      (ready) => ready,
    )
  try {
    await app.ready()
    for (const [index, next] of steps.entries()) {
      if (next.op === 'create') {
        const token = next.locked ? { accessToken: `token-${index}`, accessTokenPassword: password } : {}
        const made = await sources.createCollector({
          name: `c${index}`,
          collectorType: next.type,
          pollRateMs: 20_000,
          settings: settingsOf(next.type),
          ...token,
        })
        ids.push(made.id)
      } else if (ids.length === 0) {
        continue
      } else if (next.op === 'update') {
        const id = pick(next.at)
        const type = next.type ? { collectorType: next.type, settings: settingsOf(next.type) } : {}
        await sources.updateCollector(id, { name: `renamed ${index}`, ...type })
      } else if (next.op === 'delete') {
        const id = pick(next.at)
        await sources.deleteCollector(id)
        ids.splice(ids.indexOf(id), 1)
      } else if (next.op === 'start' || next.op === 'stop') {
        await sources.setCollectorActive(pick(next.at), next.op === 'start')
      } else if (next.op === 'lock') {
        // As after a restart of the relay: the password has to be given again.
        const id = pick(next.at)
        runtime.forget(id)
        await sources.updateCollector(id, {})
      } else if (next.op === 'unlock') {
        await sources.unlockCollector(pick(next.at), password).catch(() => {})
      } else if (next.op === 'outcome') {
        // An outcome for one of the collectors whose fetch is waiting, if any.
        for (const polling of ids) {
          await fetching(polling)
        }
        const ready = ids.filter((id) => waiting.has(id))
        const id = ready[next.at % ready.length]
        const release = id === undefined ? undefined : waiting.get(id)
        if (id === undefined || !release) {
          continue
        }
        const before = runtime.collectorHealth(id)
        release(next.next)
        // The health changes with every outcome, after the fetch's results are saved.
        await until(
          async () => runtime.collectorHealth(id),
          (health) => health !== before,
        )
        // A restart keeps the health and fetches again, so the next outcome continues the streak.
        await sources.updateCollector(id, {})
        await fetching(id)
      }
      const expected = await recomputed(relay)
      expect(await sources.collectorStats(), `after step ${index}: ${JSON.stringify(next)}`).toEqual(expected)
      const served = await app.inject({ url: '/api/collectors/stats' })
      expect(served.json(), `served after step ${index}`).toEqual(expected)
    }
  } finally {
    await app.close()
    await database.close()
    folder.remove()
  }
}

describe('collector statistics kept in memory', () => {
  it('equal a full computation from the rows after any sequence of changes, fetches and health changes', async () => {
    await fuzzCheck(
      'collector statistics view',
      fc.array(step, { minLength: 10, maxLength: 40, size: 'medium' }),
      run,
      {
        numRuns: 20,
        hangAfterMs: 30_000,
        command: 'npx vitest run apps/relay/src/sources/stats-view.test.ts',
      },
    )
  }, 120_000)

  it('are read from the database again after it was replaced', async () => {
    const { app, dataDir } = await startRelay()
    const before = await app.inject({ url: '/api/collectors/stats' })
    expect(before.json().collectors.total).toBe(0)
    // Written behind the relay's back, as a restore does by replacing the file.
    const sqlite = new SQLite(path.join(dataDir, 'relay.db'))
    sqlite
      .prepare(`insert into collectors (id, name, collector_type, poll_rate_ms, settings, created_at, updated_at)
        values ('00000000-0000-4000-8000-000000000001', 'Restored', 'Host', 1000, '{}', ?, ?)`)
      .run('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')
    sqlite.close()
    expect((await app.inject({ url: '/api/collectors/stats' })).json().collectors.total).toBe(0)
    app.services.sources.forgetStats()
    const after = (await app.inject({ url: '/api/collectors/stats' })).json()
    expect(after.collectors).toMatchObject({ total: 1, breakdown: { neverFetched: 1 } })
  })
})
