import { describe, expect, it } from 'vitest'
import { createSignInThrottle, SignInThrottled } from './sign-in-throttle.js'

const MINUTE = 60_000
const limits = {
  account: { capacity: 5, refillEvery: 15 * MINUTE },
  address: { capacity: 20, refillEvery: 15 * MINUTE },
}

function setUp() {
  let now = Date.parse('2026-01-15T12:00:00Z')
  const clock = { now: () => new Date(now) }
  const throttle = createSignInThrottle({ limits, clock })
  const fail = (account: string, address = '10.0.0.1') => throttle.attempt(account, address)
  return { throttle, fail, advance: (ms: number) => (now += ms) }
}

describe('sign-in throttle', () => {
  it('refuses an account after 5 failures, whatever its case, and names the wait', async () => {
    const { fail } = setUp()
    for (let i = 0; i < 5; i++) {
      await fail(i % 2 ? 'Ada' : 'ada')
    }
    const refused = await fail('ADA').catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(SignInThrottled)
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', minutes: 3, headers: { 'Retry-After': '180' } })
    expect((refused as Error).message).toBe('Too many failed sign-ins; try again in 3 minutes')
  })

  it('refuses an address after 20 failures across accounts', async () => {
    const { fail } = setUp()
    for (let i = 0; i < 20; i++) {
      await fail(`user-${i}`)
    }
    await expect(fail('someone-new')).rejects.toBeInstanceOf(SignInThrottled)
    await expect(fail('someone-new', '10.0.0.2')).resolves.toBeDefined()
  })

  it('counts only failures: a success gives its try back', async () => {
    const { fail } = setUp()
    for (let i = 0; i < 10; i++) {
      await (await fail('ada')).succeeded()
    }
    for (let i = 0; i < 5; i++) {
      await fail('ada')
    }
    await expect(fail('ada')).rejects.toBeInstanceOf(SignInThrottled)
  })

  it('counts parallel attempts before any password is checked', async () => {
    const { fail } = setUp()
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => fail('ada')))
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(5)
  })

  it('regains one try every 3 minutes', async () => {
    const { fail, advance } = setUp()
    for (let i = 0; i < 5; i++) {
      await fail('ada')
    }
    advance(3 * MINUTE - 1)
    await expect(fail('ada')).rejects.toBeInstanceOf(SignInThrottled)
    advance(1)
    await fail('ada')
    await expect(fail('ada')).rejects.toBeInstanceOf(SignInThrottled)
  })
})
