import { randomUUID } from 'node:crypto'
import { createTestClock, defined } from '@relay/testkit'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testConfig } from '../../test/app.js'
import { createTestDatabase, type TestDatabase } from '../../test/database.js'
import { createTokenVerifier } from '../auth/tokens.js'
import { createCloudServices } from '../services.js'
import { runCli } from './run.js'

describe('OAuth operator commands', () => {
  let database: TestDatabase

  beforeAll(async () => {
    database = await createTestDatabase('pglite')
  })

  afterAll(async () => {
    await database?.dispose()
  })

  async function cli(...argv: string[]) {
    const lines: string[] = []
    const code = await runCli(argv, { config: testConfig(database.dataDir), out: (line) => lines.push(line), database })
    return { code, lines, output: lines.join('\n') }
  }

  function verifier() {
    const services = createCloudServices({
      config: testConfig(database.dataDir),
      database,
      clock: createTestClock(new Date()),
    })
    return { verify: createTokenVerifier(services.tokens), services }
  }

  it('registers, lists and removes device clients, showing the private key once', async () => {
    const added = await cli('clients', 'add', '--name', 'Greenhouse gateway')
    expect(added.code).toBe(0)
    const clientId = /^client_id: (device-[\w-]+)$/.exec(defined(added.lines[0]))?.[1]
    expect(clientId).toBeDefined()
    const privateKey = JSON.parse(defined(added.lines[2]))
    expect(privateKey).toMatchObject({ kty: 'EC', crv: 'P-256', d: expect.any(String) })

    const stored = await database.db
      .selectFrom('oauth_payloads')
      .select('payload')
      .where('id', '=', defined(clientId))
      .executeTakeFirstOrThrow()
    expect(JSON.stringify(stored.payload)).not.toContain(privateKey.d)

    expect((await cli('clients', 'list')).output).toContain(`${clientId}  Greenhouse gateway`)
    expect((await cli('clients', 'remove', defined(clientId))).code).toBe(0)
    expect((await cli('clients', 'list')).output).not.toContain(clientId)
    const again = await cli('clients', 'remove', defined(clientId))
    expect(again.code).toBe(1)
    expect(again.output).toContain(`no device client ${clientId}`)
  })

  it('mints user and device tokens the guard accepts', async () => {
    const email = `${randomUUID()}@example.com`
    expect((await cli('users', 'add', '--email', email, '--password', 'long enough password')).code).toBe(0)
    const { verify, services } = verifier()
    const user = await services.directory.findByEmail(email)

    const minted = await cli('tokens', 'mint', '--type', 'user', '--user', email, '--minutes', '5')
    expect(minted.code).toBe(0)
    const token = defined(minted.lines[0])
    expect(decodeProtectedHeader(token).typ).toBe('at+jwt')
    expect(defined(decodeJwt(token).exp) - defined(decodeJwt(token).iat)).toBe(300)
    await expect(verify(token)).resolves.toMatchObject({ id: defined(user).id, type: 'user' })

    const device = await cli('tokens', 'mint', '--type', 'device', '--client', 'device-x')
    await expect(verify(defined(device.lines[0]))).resolves.toMatchObject({ id: 'device-x', type: 'device' })
    await services.close()
  })

  it('explains a wrong call instead of failing obscurely', async () => {
    expect(await cli('tokens', 'mint', '--type', 'admin')).toMatchObject({
      code: 2,
      output: expect.stringContaining('--type must be user or device'),
    })
    expect(await cli('tokens', 'mint', '--type', 'user')).toMatchObject({
      code: 2,
      output: expect.stringContaining('--user is required'),
    })
    expect(await cli('tokens', 'mint', '--type', 'user', '--user', 'nobody@example.com')).toMatchObject({ code: 1 })
    expect(await cli('tokens', 'mint', '--type', 'device', '--client', 'd', '--minutes', '0')).toMatchObject({
      code: 2,
    })
    expect(await cli('clients', 'add')).toMatchObject({
      code: 2,
      output: expect.stringContaining('usage: npm run cloud -- clients add'),
    })
    expect(await cli('clients', 'add', '--nme', 'x')).toMatchObject({ code: 2 })
    expect(await cli('no-such-command')).toMatchObject({ code: 2, output: expect.stringContaining('unknown command') })
  })

  it('rotates the signing key and keeps the old one verifying', async () => {
    const before = defined((await cli('tokens', 'mint', '--type', 'device', '--client', 'd')).lines[0])
    const rotated = await cli('keys', 'rotate')
    expect(rotated.code).toBe(0)
    const kid = /^active signing key: (\S+)$/.exec(defined(rotated.lines[0]))?.[1]
    expect(rotated.output).toContain(`retiring: ${decodeProtectedHeader(before).kid}`)
    const after = defined((await cli('tokens', 'mint', '--type', 'device', '--client', 'd')).lines[0])
    expect(decodeProtectedHeader(after).kid).toBe(kid)
    const { verify, services } = verifier()
    await expect(verify(before)).resolves.toMatchObject({ type: 'device' })
    await expect(verify(after)).resolves.toMatchObject({ type: 'device' })
    await services.close()
  })
})
