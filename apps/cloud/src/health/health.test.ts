import { CloudHealth, CloudNotReady, CloudReady } from '@relay/contracts'
import { freePort } from '@relay/testkit'
import pg from 'pg'
import { Value } from 'typebox/value'
import { describe, expect, inject, it } from 'vitest'
import { startTestCloud } from '../../test/cloud-server.js'
import { createTestDatabase, type DatabaseKind, databaseKinds, type TestDatabase } from '../../test/database.js'
import { redisRequirement, testRedisUrl } from '../../test/redis.js'
import { version } from '../app.js'

/** Only to catch a probe that hangs: each check has about a second, all of them run at once. */
const HANGING_MS = 5000

async function get(base: string, path: string) {
  const started = performance.now()
  const res = await fetch(`${base}${path}`)
  return { status: res.status, body: await res.json(), ms: performance.now() - started, cacheControl: res.headers }
}

/** Makes the test database refuse every connection, as an unreachable server would. */
async function refuseConnections(database: TestDatabase, refuse: boolean) {
  const template = inject('postgresTemplate')
  if (!template || !database.url) {
    throw new Error('needs PostgreSQL')
  }
  const name = new URL(database.url).pathname.slice(1)
  const admin = new pg.Client({ connectionString: template.url })
  await admin.connect()
  try {
    await admin.query(`alter database "${name}" allow_connections ${refuse ? 'false' : 'true'}`)
    if (refuse) {
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name])
    }
  } finally {
    await admin.end()
  }
}

/** Takes the database away from a running cloud: PGlite is closed, PostgreSQL refuses connections. */
async function cutDatabase(kind: DatabaseKind, database: TestDatabase) {
  if (kind === 'pglite') {
    await database.close()
  } else {
    await refuseConnections(database, true)
  }
}

describe.each(databaseKinds)('liveness and readiness on %s', (kind) => {
  it('is ready when every dependency answers', async () => {
    const cloud = await startTestCloud(kind)
    try {
      const ready = await get(cloud.url, '/readyz')
      expect(ready.status).toBe(200)
      expect(ready.body).toEqual({
        status: 'ready',
        checks: { database: 'ok', redis: 'not configured', objectStore: 'ok' },
      })
      expect(Value.Check(CloudReady, ready.body)).toBe(true)
      expect(ready.cacheControl.get('cache-control')).toBe('no-store')

      const live = await get(cloud.url, '/healthz')
      expect(live.status).toBe(200)
      expect(live.body).toMatchObject({ status: 'ok', version, db: { ok: true, driver: kind } })
    } finally {
      await cloud.close()
    }
  })

  it('stays live but not ready while the database is gone, and names it', async () => {
    const database = await createTestDatabase(kind)
    const cloud = await startTestCloud(kind, { database })
    try {
      await cutDatabase(kind, database)

      const ready = await get(cloud.url, '/readyz')
      expect(ready.status).toBe(503)
      expect(Value.Check(CloudNotReady, ready.body)).toBe(true)
      expect(ready.body).toMatchObject({
        success: false,
        code: 'UNAVAILABLE',
        status: 'not ready',
        error: 'Not ready: the database is not answering',
        checks: { database: expect.stringMatching(/^failed: \S/), redis: 'not configured', objectStore: 'ok' },
      })
      expect(ready.ms).toBeLessThan(HANGING_MS)

      // Liveness answers 200 while the process runs, and reports what the last check found.
      const live = await get(cloud.url, '/healthz')
      expect(live.status).toBe(200)
      expect(Value.Check(CloudHealth, live.body)).toBe(true)
      expect(live.body).toMatchObject({ status: 'degraded', db: { ok: false, driver: kind } })

      if (kind === 'postgres') {
        // A server that accepts connections again makes the same process ready again.
        await refuseConnections(database, false)
        expect((await get(cloud.url, '/readyz')).status).toBe(200)
        expect((await get(cloud.url, '/healthz')).body).toMatchObject({ status: 'ok', db: { ok: true } })
      }
    } finally {
      await cloud.close()
      if (kind === 'postgres') {
        await refuseConnections(database, false)
      }
      await database.dispose().catch(() => {})
    }
  })
})

describe.skipIf(!databaseKinds.includes('postgres'))('readiness after PostgreSQL ended every connection', () => {
  it('answers ready at once: a pooled connection found dead is replaced, not reported', async () => {
    const cloud = await startTestCloud('postgres')
    const admin = new pg.Client({ connectionString: cloud.database.url })
    await admin.connect()
    try {
      expect((await get(cloud.url, '/readyz')).status).toBe(200)
      await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      )
      const ready = await get(cloud.url, '/readyz')
      expect(ready.body).toMatchObject({ checks: { database: 'ok' } })
      expect(ready.status).toBe(200)
    } finally {
      await admin.end()
      await cloud.close()
    }
  })
})

describe('readiness of the optional and external dependencies', () => {
  it('names Redis when REDIS_URL points at a closed port, and stays live', async () => {
    const cloud = await startTestCloud('pglite', { env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` } })
    try {
      const ready = await get(cloud.url, '/readyz')
      expect(ready.status).toBe(503)
      expect(ready.body).toMatchObject({
        code: 'UNAVAILABLE',
        error: 'Not ready: Redis is not answering',
        checks: { database: 'ok', redis: expect.stringMatching(/^failed: \S/), objectStore: 'ok' },
      })
      expect(ready.ms).toBeLessThan(HANGING_MS)
      const live = await get(cloud.url, '/healthz')
      expect(live.status).toBe(200)
      expect(live.body).toMatchObject({ status: 'ok' })
    } finally {
      await cloud.close()
    }
  })

  it.skipIf(!redisRequirement.available)('reports a reachable Redis as ok', async () => {
    const cloud = await startTestCloud('pglite', { env: { REDIS_URL: testRedisUrl } })
    try {
      const ready = await get(cloud.url, '/readyz')
      expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok', objectStore: 'ok' } })
    } finally {
      await cloud.close()
    }
  })

  it('names the object store when its endpoint does not answer', async () => {
    const cloud = await startTestCloud('pglite', {
      env: {
        S3_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
        S3_ACCESS_KEY_ID: 'probe-key',
        S3_SECRET_ACCESS_KEY: 'probe-secret',
      },
    })
    try {
      const ready = await get(cloud.url, '/readyz')
      expect(ready.status).toBe(503)
      expect(ready.body).toMatchObject({
        error: 'Not ready: the object store is not answering',
        checks: { database: 'ok', redis: 'not configured', objectStore: expect.stringMatching(/^failed: \S/) },
      })
      expect(ready.ms).toBeLessThan(HANGING_MS)
      expect((await get(cloud.url, '/healthz')).status).toBe(200)
    } finally {
      await cloud.close()
    }
  })
})
