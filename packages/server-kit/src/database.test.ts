import { describe, expect, it } from 'vitest'
import { coalesce, pingDatabase } from './database.js'

describe('coalesce', () => {
  it('shares one in-flight call and starts a fresh one after it settles', async () => {
    let calls = 0
    const ping = coalesce(async () => ++calls)
    expect(await Promise.all([ping(), ping(), ping()])).toEqual([1, 1, 1])
    expect(await ping()).toBe(2)
  })

  it('does not keep a failure: the next call tries again', async () => {
    let calls = 0
    const ping = coalesce(async () => {
      calls++
      if (calls === 1) {
        throw new Error('down')
      }
      return 'up'
    })
    await expect(ping()).rejects.toThrow('down')
    expect(await ping()).toBe('up')
  })
})

describe('pingDatabase', () => {
  it('reports a failing query instead of throwing', async () => {
    const health = await pingDatabase('sqlite', () => {
      throw new Error('database is locked')
    })
    expect(health).toMatchObject({ ok: false, driver: 'sqlite', error: 'database is locked' })
    expect(health.latencyMs).toBeGreaterThanOrEqual(0)
  })
})
