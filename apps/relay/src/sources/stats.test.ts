import path from 'node:path'
import SQLite from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { startRelay } from '../../test/app.js'
import { collectorStats } from '../dashboard/health.js'

describe('collector statistics', () => {
  it('counting healthy collectors in SQL gives the same answer as classifying every collector', async () => {
    const { app, dataDir } = await startRelay()
    const sqlite = new SQLite(path.join(dataDir, 'relay.db'))
    const insert =
      sqlite.prepare(`insert into collectors (id, name, collector_type, poll_rate_ms, settings, access_token, access_token_salt,
      last_fetch_time, last_fetch_successful, last_fetch_error_message, last_fetch_total_sensors, last_fetch_new_sensors,
      last_fetch_lost_sensors, created_at, updated_at) values (?, ?, ?, 1000, '{}', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    const types = ['Host', 'Virtual', 'GenericAPI', 'EventEngine'] as const
    const expected = []
    for (let i = 0; i < 400; i++) {
      // A spread of every state the rules distinguish, by a deterministic pattern.
      const row = {
        id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        name: `c${i}`,
        collectorType: types[i % 4] ?? 'Host',
        locked: i % 7 === 0,
        lastFetchTime: i % 5 === 0 ? null : new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        lastFetchSuccessful: i % 3 !== 0,
        lastFetchErrorMessage: i % 3 === 0 ? `error ${i}` : null,
        lastFetchTotalSensors: i % 11,
        lastFetchNewSensors: i % 4,
        lastFetchLostSensors: i % 13 === 0 ? 2 : 0,
      }
      insert.run(
        row.id,
        row.name,
        row.collectorType,
        row.locked ? 'v1.x.y.z' : null,
        row.locked ? 'salt' : null,
        row.lastFetchTime,
        row.lastFetchSuccessful ? 1 : 0,
        row.lastFetchErrorMessage,
        row.lastFetchTotalSensors,
        row.lastFetchNewSensors,
        row.lastFetchLostSensors,
        row.lastFetchTime ?? '2026-01-01T00:00:00.000Z',
        '2026-01-01T00:00:00.000Z',
      )
      expected.push({ ...row, externalAccessToken: row.locked, unlocked: !row.locked })
    }
    sqlite.close()
    const order = await app.inject({ url: '/api/collectors' })
    const ids: string[] = order.json().map((c: { id: string }) => c.id)
    expected.sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id))
    const stats = (await app.inject({ url: '/api/collectors/stats' })).json()
    expect(stats).toEqual(collectorStats(expected, { active: 0, failing: 0, degraded: 0 }))
    expect(stats.collectors.breakdown.healthy).toBeGreaterThan(0)
    expect(stats.collectors.details.length).toBeGreaterThan(0)
  })
})
