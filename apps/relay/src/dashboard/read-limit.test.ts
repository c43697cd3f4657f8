import type { AddressInfo } from 'node:net'
import { dashboardPolling, dashboardUrls, rateLimitPolicies, sessionCookieName } from '@relay/contracts'
import { createTestClock, defined } from '@relay/testkit'
import { describe, expect, it } from 'vitest'
import { startRelay } from '../../test/app.js'
import type { RelayApp } from '../app.js'

const reads = [dashboardUrls.collectorStats.url, dashboardUrls.streamStats.url]
const { capacity, refillEvery } = rateLimitPolicies.dashboard

async function listening(app: RelayApp): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

/** `count` dashboard reads at once, both statistics in turn; their statuses and Retry-After headers. */
async function readAtOnce(base: string, count: number) {
  const replies = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const response = await fetch(`${base}${reads[i % reads.length]}`)
      return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() }
    }),
  )
  const refused = replies.filter((reply) => reply.status === 429)
  return { ok: replies.filter((reply) => reply.status === 200).length, refused }
}

describe('dashboard rate limit', () => {
  it('answers 200 of 300 parallel reads and refuses the rest with 429 and Retry-After, until the bucket refills', async () => {
    const clock = createTestClock()
    const { app } = await startRelay({ clock })
    const base = await listening(app)

    const burst = await readAtOnce(base, 300)
    expect(burst.ok).toBe(capacity)
    expect(burst.refused).toHaveLength(300 - capacity)
    for (const refusal of burst.refused) {
      expect(refusal.body).toMatchObject({ success: false, code: 'RATE_LIMITED' })
      // One token comes back every 50 ms: retry after the least whole second.
      expect(refusal.retryAfter).toBe('1')
    }

    const oneToken = refillEvery / capacity
    clock.advance(oneToken - 1)
    expect((await readAtOnce(base, 1)).ok).toBe(0)
    clock.advance(1)
    expect((await readAtOnce(base, 2)).ok).toBe(1)

    clock.advance(refillEvery)
    const refilled = await readAtOnce(base, capacity + 1)
    expect(refilled.ok).toBe(capacity)
    expect(refilled.refused).toHaveLength(1)
  })

  it('keeps one bucket per signed-in session', async () => {
    const clock = createTestClock()
    const { app } = await startRelay({ clock })
    const account = { username: 'ada', password: 'correct horse battery' }
    const signIn = async (url: string) => {
      const response = await app.inject({ method: 'POST', url, payload: account })
      return defined(response.cookies.find((cookie) => cookie.name === sessionCookieName)).value
    }
    const first = await signIn('/api/unified-auth/local/setup')
    const second = await signIn('/api/unified-auth/local/login')
    const read = (token: string) =>
      app.inject({ url: dashboardUrls.collectorStats.url, cookies: { [sessionCookieName]: token } })

    const statuses = await Promise.all(Array.from({ length: capacity + 1 }, async () => (await read(first)).statusCode))
    expect(statuses.filter((status) => status === 200)).toHaveLength(capacity)
    expect((await read(first)).statusCode).toBe(429)
    expect((await read(second)).statusCode).toBe(200)
  })

  it("stays far from the web UI's own polling, even with ten dashboards open", async () => {
    const clock = createTestClock()
    const { app } = await startRelay({ clock })
    const tabs = 10
    for (let elapsed = 0; elapsed < 60_000; elapsed += dashboardPolling.interval) {
      for (let tab = 0; tab < tabs; tab++) {
        for (const url of reads) {
          expect((await app.inject({ url })).statusCode).toBe(200)
        }
      }
      clock.advance(dashboardPolling.interval)
    }
    const perWindow = tabs * reads.length * (refillEvery / dashboardPolling.interval)
    expect(perWindow).toBeLessThanOrEqual(capacity / 4)
  })
})
