import { createTestClock } from '@relay/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/database.js'
import { kyselyAdapter, pruneExpiredArtifacts } from './adapter.js'

describe.each(databaseKinds)('OAuth storage on %s', (kind) => {
  let database: TestDatabase
  let adapterFor: ReturnType<typeof kyselyAdapter>

  beforeAll(async () => {
    database = await createTestDatabase(kind)
    adapterFor = kyselyAdapter(database.db)
  })

  afterAll(async () => {
    await database?.dispose()
  })

  it('stores, finds, consumes and destroys by model', async () => {
    const codes = adapterFor('AuthorizationCode')
    const sessions = adapterFor('Session')
    await codes.upsert('c1', { grantId: 'g1', accountId: 'u1', kind: 'AuthorizationCode' }, 60)
    await sessions.upsert('c1', { uid: 'uid-1', kind: 'Session' }, 60)
    expect(await codes.find('c1')).toMatchObject({ grantId: 'g1' })
    expect(await sessions.findByUid('uid-1')).toMatchObject({ kind: 'Session' })
    expect(await codes.findByUid('uid-1')).toBeUndefined()

    await codes.consume('c1')
    expect(await codes.find('c1')).toMatchObject({ consumed: expect.any(Number) })
    await codes.destroy('c1')
    expect(await codes.find('c1')).toBeUndefined()
    expect(await sessions.find('c1')).toBeDefined()
  })

  it('revokes everything of a grant, the grant included', async () => {
    await adapterFor('Grant').upsert('g2', { accountId: 'u2', clientId: 'relay', kind: 'Grant' }, 3600)
    await adapterFor('RefreshToken').upsert('r2', { grantId: 'g2', kind: 'RefreshToken' }, 3600)
    await adapterFor('RefreshToken').upsert('r3', { grantId: 'g3', kind: 'RefreshToken' }, 3600)
    await adapterFor('RefreshToken').revokeByGrantId('g2')
    expect(await adapterFor('Grant').find('g2')).toBeUndefined()
    expect(await adapterFor('RefreshToken').find('r2')).toBeUndefined()
    expect(await adapterFor('RefreshToken').find('r3')).toBeDefined()
  })

  it('treats expired rows as missing and prunes them', async () => {
    const interactions = adapterFor('Interaction')
    await interactions.upsert('i1', { kind: 'Interaction' }, 1)
    await interactions.upsert('i2', { kind: 'Interaction' }, 3600)
    await adapterFor('Client').upsert('device-1', { client_id: 'device-1' }, 0)
    const later = createTestClock(new Date(Date.now() + 2000))
    const log = { info: () => {} }
    expect(await pruneExpiredArtifacts(database.db, later, log)).toBeGreaterThanOrEqual(1)
    expect(await interactions.find('i1')).toBeUndefined()
    expect(await interactions.find('i2')).toBeDefined()
    expect(await adapterFor('Client').find('device-1')).toBeDefined()
  })
})
