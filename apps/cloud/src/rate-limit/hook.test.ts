import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newCaller } from '../../test/backup-client.js'
import { startTestCloud, type TestCloud } from '../../test/cloud-server.js'

describe('rate limits without their store', () => {
  let cloud: TestCloud

  beforeAll(async () => {
    // Nothing listens on port 1: every Redis command fails.
    cloud = await startTestCloud('pglite', { env: { REDIS_URL: 'redis://127.0.0.1:1', LOG_LEVEL: 'fatal' } })
  })

  afterAll(async () => {
    await cloud?.close()
  })

  it('refuses with 503 instead of letting requests through unlimited', async () => {
    // Unlicensed: gifting would need the (unreachable) shared license cache.
    const user = await newCaller(cloud, { licensed: false })
    const response = await user.call('GET', '/cloud-backups/status')
    expect(response.status).toBe(503)
    expect(await response.json()).toMatchObject({ success: false, code: 'UNAVAILABLE' })
  })
})
