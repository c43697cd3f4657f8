import { describe, expect, it } from 'vitest'
import { type CollectorStatsRow, createCollectorStatsView } from './collector-view.js'

function row(overrides: Partial<CollectorStatsRow> = {}): CollectorStatsRow {
  return {
    id: 'c1',
    name: 'Host',
    collector_type: 'Host',
    access_token_salt: null,
    last_fetch_time: null,
    last_fetch_successful: 0,
    last_fetch_error_message: null,
    last_fetch_total_sensors: 0,
    last_fetch_new_sensors: 0,
    last_fetch_lost_sensors: 0,
    created_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  }
}

/** A view whose loads wait until the test hands them their rows. */
function viewWithLoads() {
  const loads: Array<(rows: CollectorStatsRow[]) => void> = []
  const view = createCollectorStatsView({
    load: () => new Promise((resolve) => loads.push(resolve)),
    polling: () => ({ active: 0, failing: 0, degraded: 0 }),
    isUnlocked: () => false,
  })
  return { view, loads }
}

const fetched = {
  last_fetch_time: '2026-01-01T00:01:00.000Z',
  last_fetch_successful: 1 as const,
  last_fetch_error_message: null,
  last_fetch_total_sensors: 4,
  last_fetch_new_sensors: 4,
  last_fetch_lost_sensors: 0,
}

describe('collector statistics view', () => {
  it('applies a change that came while the rows were loading', async () => {
    const { view, loads } = viewWithLoads()
    const answer = view.stats()
    // The load read the row before this fetch was saved.
    view.apply({ kind: 'fetched', id: 'c1', saved: fetched })
    loads[0]?.([row()])
    const stats = await answer
    expect(stats.collectors.breakdown).toMatchObject({ neverFetched: 0, healthy: 1 })
    expect(stats.sensors.total).toBe(4)
    expect(await view.stats()).toBe(stats)
  })

  it('reads the rows again when forgotten, even during a load', async () => {
    const { view, loads } = viewWithLoads()
    const stale = view.stats()
    view.forget()
    loads[0]?.([row()])
    expect((await stale).collectors.total).toBe(1)
    const fresh = view.stats()
    loads[1]?.([row(), row({ id: 'c2' })])
    expect((await fresh).collectors.total).toBe(2)
    expect(loads).toHaveLength(2)
  })

  it('answers the same object until something changes', async () => {
    const { view, loads } = viewWithLoads()
    const first = view.stats()
    loads[0]?.([row()])
    const stats = await first
    expect(await view.stats()).toBe(stats)
    view.saved(row({ name: 'Renamed' }))
    const renamed = await view.stats()
    expect(renamed).not.toBe(stats)
    expect(renamed.collectors.details[0]?.title).toBe('Renamed: No data yet')
  })
})
