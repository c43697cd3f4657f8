import { randomBytes } from 'node:crypto'
import { createTestClock, defined } from '@relay/testkit'
import { type Kysely, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../test/database.js'
import { createAccountService, sessionIdOf } from '../auth/service.js'
import * as hashOAuthIds from '../db/migrations/0005-hashed-oauth-ids.js'
import type { CloudDB } from '../db/schema.js'
import { createUserDirectory } from '../directory/service.js'
import { createMemoryLicenseCache } from '../licenses/cache.js'
import { createLicenseService } from '../licenses/service.js'
import { hashedId, kyselyAdapter, pruneExpiredArtifacts } from './adapter.js'

/** Every column of every OAuth row, as a dump of the database would show it. */
async function storedText(db: Kysely<CloudDB>): Promise<string> {
  const rows = await sql<{ row: string }>`select t::text as row from oauth_payloads as t`.execute(db)
  return rows.rows.map((r) => r.row).join('\n')
}

describe.each(databaseKinds)('OAuth storage, credentials hashed at rest, on %s', (kind) => {
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

  const randomId = () => randomBytes(32).toString('base64url')

  it('stores every model that holds a credential under the hash of its id, and gives the payload back whole', async () => {
    const models = [
      'Session',
      'AuthorizationCode',
      'RefreshToken',
      'Grant',
      'AccessToken',
      'ClientCredentials',
      'RegistrationAccessToken',
      'ReplayDetection',
      'PushedAuthorizationRequest',
      'BackchannelAuthenticationRequest',
    ]
    const grantId = randomId()
    const stored = models.map((model) => {
      // The grant itself is stored under its id; everything else names it.
      const id = model === 'Grant' ? grantId : randomId()
      const payload = { jti: id, kind: model, accountId: 'u-1', iat: 1, exp: 4102444800 }
      return { model, id, payload: model === 'Grant' ? payload : { ...payload, grantId } }
    })
    for (const { model, id, payload } of stored) {
      await adapterFor(model).upsert(id, payload, 3600)
    }

    const dump = await storedText(database.db)
    for (const { model, id, payload } of stored) {
      // Grant ids stay in token payloads, where oidc-provider reads them: they name a grant, they open nothing.
      if (model !== 'Grant') {
        expect(dump, model).not.toContain(id)
      }
      expect(await adapterFor(model).find(id), model).toEqual(payload)
      const row = await database.db
        .selectFrom('oauth_payloads')
        .selectAll()
        .where('model', '=', model)
        .where('id', '=', hashedId(id))
        .executeTakeFirst()
      expect(row?.grant_id, model).toBe(hashedId(grantId))
    }

    // Consuming and destroying find the row by the same hash.
    const code = defined(stored.find((s) => s.model === 'AuthorizationCode'))
    await adapterFor('AuthorizationCode').consume(code.id)
    expect(await adapterFor('AuthorizationCode').find(code.id)).toMatchObject({
      jti: code.id,
      consumed: expect.any(Number),
    })
    await adapterFor('AuthorizationCode').destroy(code.id)
    expect(await adapterFor('AuthorizationCode').find(code.id)).toBeUndefined()

    // Revoking by the (raw) grant id still reaches every token of the grant.
    await adapterFor('RefreshToken').revokeByGrantId(grantId)
    for (const { model, id } of stored) {
      expect(await adapterFor(model).find(id), model).toBeUndefined()
    }
  })

  it('finds a session by its uid through the hash, and keeps the session cookie out of interactions', async () => {
    const sessionId = randomId()
    const uid = randomId()
    await adapterFor('Session').upsert(sessionId, { jti: sessionId, uid, kind: 'Session', accountId: 'u-2' }, 3600)
    const interactionId = randomId()
    const interaction = {
      jti: interactionId,
      kind: 'Interaction',
      returnTo: `http://127.0.0.1:3000/oauth/auth/${interactionId}`,
      session: { accountId: 'u-2', uid, cookie: sessionId },
      params: { client_id: 'relay', state: `{id}${interactionId}` },
    }
    await adapterFor('Interaction').upsert(interactionId, interaction, 600)

    const dump = await storedText(database.db)
    expect(dump).not.toContain(sessionId)
    expect(dump).not.toContain(`auth/${interactionId}`)
    expect(await adapterFor('Session').findByUid(uid)).toMatchObject({ uid, accountId: 'u-2' })
    expect(await adapterFor('Session').find(sessionId)).toEqual({
      jti: sessionId,
      uid,
      kind: 'Session',
      accountId: 'u-2',
    })
    // The resume address comes back whole; the cookie value, which oidc-provider never reads back, does not.
    expect(await adapterFor('Interaction').find(interactionId)).toEqual({
      ...interaction,
      session: { accountId: 'u-2', uid },
    })
  })

  it('finds a device code by the hash of its user code, and keeps client ids as they are', async () => {
    const deviceCode = randomId()
    await adapterFor('DeviceCode').upsert(
      deviceCode,
      { jti: deviceCode, kind: 'DeviceCode', userCode: 'BCDF-GHJK', grantId: 'g-dev' },
      600,
    )
    expect(await adapterFor('DeviceCode').findByUserCode('BCDF-GHJK')).toMatchObject({ jti: deviceCode })
    expect(await adapterFor('DeviceCode').find(deviceCode)).toMatchObject({ userCode: 'BCDF-GHJK' })
    const dump = await storedText(database.db)
    expect(dump).toContain(hashedId('BCDF-GHJK'))

    await adapterFor('Client').upsert('device-plain', { client_id: 'device-plain' }, 0)
    const client = await database.db
      .selectFrom('oauth_payloads')
      .select('id')
      .where('model', '=', 'Client')
      .where('id', '=', 'device-plain')
      .executeTakeFirst()
    expect(client).toBeDefined()
  })

  it('converts rows stored before hashing, so existing sign-ins keep working', async () => {
    const legacy = await createTestDatabase(kind)
    try {
      const grantId = randomId()
      const refreshToken = randomId()
      const sessionId = randomId()
      const uid = randomId()
      const interactionId = randomId()
      const account = 'u-legacy'
      const rows = [
        {
          model: 'Grant',
          id: grantId,
          payload: { jti: grantId, kind: 'Grant', accountId: account, clientId: 'relay', iat: 1 },
          grant_id: grantId,
          account_id: account,
        },
        {
          model: 'RefreshToken',
          id: refreshToken,
          payload: { jti: refreshToken, kind: 'RefreshToken', grantId, accountId: account },
          grant_id: grantId,
          account_id: account,
        },
        {
          model: 'Session',
          id: sessionId,
          payload: { jti: sessionId, kind: 'Session', uid, accountId: account },
          uid,
          account_id: account,
        },
        {
          model: 'Interaction',
          id: interactionId,
          payload: { jti: interactionId, kind: 'Interaction', session: { cookie: sessionId } },
        },
        { model: 'Client', id: 'device-legacy', payload: { client_id: 'device-legacy' } },
      ]
      const expiresAt = new Date(Date.now() + 3600_000)
      for (const row of rows) {
        await legacy.db
          .insertInto('oauth_payloads')
          .values({ ...row, payload: JSON.stringify(row.payload), expires_at: expiresAt })
          .execute()
      }

      await hashOAuthIds.up(legacy.db as Kysely<unknown>)

      const dump = await storedText(legacy.db)
      for (const secret of [refreshToken, sessionId, interactionId]) {
        expect(dump).not.toContain(secret)
      }
      const adapter = kyselyAdapter(legacy.db)
      expect(await adapter('RefreshToken').find(refreshToken)).toMatchObject({ jti: refreshToken, grantId })
      expect(await adapter('Session').find(sessionId)).toMatchObject({ jti: sessionId, uid })
      expect(await adapter('Session').findByUid(uid)).toMatchObject({ accountId: account })
      expect(await adapter('Interaction').find(interactionId)).toBeUndefined()
      expect(await adapter('Client').find('device-legacy')).toEqual({ client_id: 'device-legacy' })

      // The cloud's session list shows the converted grant, and revoking it ends its refresh token.
      const clock = createTestClock(new Date())
      const licenses = createLicenseService({ db: legacy.db, clock, cache: createMemoryLicenseCache({ clock }) })
      const accounts = createAccountService({
        db: legacy.db,
        directory: createUserDirectory({ db: legacy.db }),
        checkLicense: licenses.check,
        clock,
      })
      const principal = { id: account, sessionId: undefined }
      const sessions = await accounts.listSessions(principal)
      expect(sessions.map((session) => session.id)).toEqual([sessionIdOf(grantId)])
      await accounts.revokeSession(account, sessionIdOf(grantId))
      expect(await adapter('RefreshToken').find(refreshToken)).toBeUndefined()
    } finally {
      await legacy.dispose()
    }
  })
})
