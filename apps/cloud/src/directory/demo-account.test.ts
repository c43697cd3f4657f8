import { defined } from '@relay/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testConfig } from '../../test/app.js'
import { createTestDatabase, type TestDatabase } from '../../test/database.js'
import { createApp } from '../app.js'
import { createCloudServices } from '../services.js'
import { demoEmail, seedDemoAccount } from './demo-account.js'

describe('demo account', () => {
  let database: TestDatabase
  let services: ReturnType<typeof createCloudServices>

  beforeAll(async () => {
    database = await createTestDatabase('pglite')
    services = createCloudServices({ config: testConfig(database.dataDir), database })
  })

  afterAll(async () => {
    await services?.close()
    await database?.dispose()
  })

  it('is created once, with a gifted license and a password that signs in', async () => {
    const seeded = await seedDemoAccount(services.directory, services.licenses)
    expect(seeded).toEqual({ email: demoEmail, password: expect.stringMatching(/^[\w-]{16}$/) })
    const account = await services.directory.authenticate(demoEmail, defined(seeded).password)
    expect(account?.email).toBe(demoEmail)
    await expect(services.licenses.check(defined(account).id)).resolves.toEqual({ valid: true, source: 'gifted' })

    await expect(seedDemoAccount(services.directory, services.licenses)).resolves.toBeUndefined()
    expect((await services.directory.list()).filter((user) => user.email === demoEmail)).toHaveLength(1)
  })

  it('is announced once by an app started with CLOUD_DEMO_ACCOUNT, never logged', async () => {
    const own = await createTestDatabase('pglite')
    const announced: string[] = []
    const logs: string[] = []
    const start = () =>
      createApp(testConfig(own.dataDir, { CLOUD_DEMO_ACCOUNT: 'true', LOG_LEVEL: 'debug' }), {
        database: own,
        announce: (message) => announced.push(message),
        logStream: { write: (line) => void logs.push(line) },
      })
    await (await start()).close()
    await (await start()).close()
    await own.dispose()
    expect(announced).toHaveLength(1)
    const password = defined(/demo@relay\.local \/ ([\w-]+)/.exec(announced[0] ?? '')?.[1])
    expect(logs.join('')).not.toContain(password)
  })
})
