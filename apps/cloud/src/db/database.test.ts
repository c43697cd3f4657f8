import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir } from '@relay/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { openDatabase } from './database.js'

describe('embedded database folder', () => {
  const folders: ReturnType<typeof tempDir>[] = []
  afterEach(() => {
    for (const folder of folders.splice(0)) {
      folder.remove()
    }
  })

  it('refuses a second opener while the first holds it, and frees it on close', async () => {
    const folder = tempDir('relay-cloud-lock-')
    folders.push(folder)
    const first = await openDatabase({ databaseUrl: undefined, dataDir: folder.path })
    await expect(openDatabase({ databaseUrl: undefined, dataDir: folder.path })).rejects.toThrow(
      /is in use by process \d+ \(this one\)\. Stop the cloud first/,
    )
    await first.close()
    expect(existsSync(path.join(folder.path, 'pglite.lock'))).toBe(false)
    const second = await openDatabase({ databaseUrl: undefined, dataDir: folder.path })
    await second.close()
  })

  it('takes over a lock left by a process that is gone', async () => {
    const folder = tempDir('relay-cloud-lock-')
    folders.push(folder)
    const lockFile = path.join(folder.path, 'pglite.lock')
    // Above any pid Linux hands out (pid_max is at most 2^22): no process can hold it.
    writeFileSync(lockFile, '2147483646')
    const database = await openDatabase({ databaseUrl: undefined, dataDir: folder.path })
    try {
      expect(readFileSync(lockFile, 'utf8')).toBe(String(process.pid))
      await expect(database.ping()).resolves.toMatchObject({ ok: true, driver: 'pglite' })
      // The lock taken over holds like any other.
      await expect(openDatabase({ databaseUrl: undefined, dataDir: folder.path })).rejects.toThrow(
        /is in use by process \d+ \(this one\)/,
      )
    } finally {
      await database.close()
    }
    expect(existsSync(lockFile)).toBe(false)
  })
})
