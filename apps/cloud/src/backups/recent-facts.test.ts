import { createTestClock } from '@relay/testkit'
import { describe, expect, it } from 'vitest'
import { createRecentFacts, statusFreshFor } from './recent-facts.js'

describe('recent status facts', () => {
  function setup() {
    const clock = createTestClock()
    let version = 0
    const loads: string[] = []
    let gate: Promise<void> | undefined
    const facts = createRecentFacts(async (userId) => {
      loads.push(userId)
      const seen = version
      await gate
      return `${userId}@${seen}`
    }, clock)
    return {
      clock,
      facts,
      loads,
      bump: () => version++,
      hold() {
        let release = () => {}
        gate = new Promise((resolve) => {
          release = resolve
        })
        return () => {
          gate = undefined
          release()
        }
      },
    }
  }

  it('shares one read among concurrent callers and reuses it while fresh', async () => {
    const { facts, loads, clock } = setup()
    expect(await Promise.all([facts.get('u'), facts.get('u')])).toEqual(['u@0', 'u@0'])
    clock.advance(statusFreshFor - 1)
    await facts.get('u')
    expect(loads).toEqual(['u'])
    clock.advance(1)
    await facts.get('u')
    expect(loads).toEqual(['u', 'u'])
  })

  it('reads again after a write of that user, and only that user', async () => {
    const { facts, loads, bump } = setup()
    await facts.get('u')
    await facts.get('v')
    bump()
    await facts.after('u', Promise.resolve())
    expect(await facts.get('u')).toBe('u@1')
    await facts.get('v')
    expect(loads).toEqual(['u', 'v', 'u'])
  })

  it('does not keep a read that was in flight when a write landed', async () => {
    const { facts, loads, bump, hold } = setup()
    const release = hold()
    const early = facts.get('u')
    bump()
    await facts.after('u', Promise.resolve())
    release()
    expect(await early).toBe('u@0')
    expect(await facts.get('u')).toBe('u@1')
    expect(loads).toEqual(['u', 'u'])
  })

  it('drops its entry when the write fails too', async () => {
    const { facts, loads } = setup()
    await facts.get('u')
    await expect(facts.after('u', Promise.reject(new Error('no')))).rejects.toThrow('no')
    await facts.get('u')
    expect(loads).toEqual(['u', 'u'])
  })
})
