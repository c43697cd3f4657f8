import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { migrateToLatest } from '@relay/server-kit'
import { tempDir } from '@relay/testkit'
import SQLite from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase } from '../../test/database.js'
import { damagedDatabaseMessage, databaseFile, openDatabase } from './database.js'
import { migrations } from './migrations/index.js'

describe('relay database', () => {
  it('opens in WAL mode with a busy timeout and foreign keys on', async () => {
    const database = await createTestDatabase()
    expect(database.sqlite.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(database.sqlite.pragma('busy_timeout', { simple: true })).toBe(5000)
    expect(database.sqlite.pragma('foreign_keys', { simple: true })).toBe(1)
    await database.dispose()
  })

  it('migrates to a schema that stores and reads settings', async () => {
    const database = await createTestDatabase()
    await database.db.insertInto('app_settings').values({ key: 'mode', value: '"none"' }).execute()
    const row = await database.db.selectFrom('app_settings').selectAll().executeTakeFirstOrThrow()
    expect(row).toMatchObject({ key: 'mode', value: '"none"' })
    expect(new Date(row.updated_at).getTime()).not.toBeNaN()
    await database.dispose()
  })

  it('lets a second connection read while the first holds a write transaction', async () => {
    const database = await createTestDatabase()
    const reader = new SQLite(database.file, { readonly: true })
    database.sqlite.exec("begin; insert into app_settings (key, value) values ('k', '1')")
    expect(reader.prepare('select count(*) as n from app_settings').get()).toEqual({ n: 0 })
    database.sqlite.exec('commit')
    expect(reader.prepare('select count(*) as n from app_settings').get()).toEqual({ n: 1 })
    reader.close()
    await database.dispose()
  })
})

const folders: { remove(): void }[] = []
afterEach(() => {
  for (const folder of folders.splice(0)) {
    folder.remove()
  }
})

function dataFolder(): string {
  const folder = tempDir('relay-damaged-')
  folders.push(folder)
  return folder.path
}

/** A real, migrated relay.db with some rows, closed cleanly (no WAL left beside it). */
async function realDatabase(dataDir: string): Promise<string> {
  const database = openDatabase(dataDir)
  await migrateToLatest(database.db, migrations)
  for (let i = 0; i < 200; i++) {
    await database.db
      .insertInto('app_settings')
      .values({ key: `key-${i}`, value: JSON.stringify('x'.repeat(200)) })
      .execute()
  }
  await database.close()
  return path.join(dataDir, databaseFile)
}

/** Runs the relay's main the way `npm start` does (a process of its own) until it exits. */
function runRelayProcess(dataDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'src/main.ts'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, RELAY_PORT: '0', RELAY_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Only a safety net: a relay that starts anyway would otherwise run on after the test.
      timeout: 25_000,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

describe('a damaged relay.db at start', () => {
  it('prints one sentence naming the file instead of a stack trace, exits 1 and leaves the file as it was', async () => {
    const dataDir = dataFolder()
    const file = path.join(dataDir, databaseFile)
    const garbage = Buffer.from('this is not a database '.repeat(400))
    writeFileSync(file, garbage)

    const { code, stdout, stderr } = await runRelayProcess(dataDir)
    expect(code).toBe(1)
    expect(stderr).not.toContain('    at ')
    expect(stdout).not.toContain('    at ')
    expect(stderr.trim().split('\n')).toContain(
      `The relay cannot start: its database ${file} is damaged (file is not a database), and ` +
        `${path.join(dataDir, 'pre-restore')}${path.sep} holds no safety copies: move relay.db and any relay.db-wal and ` +
        'relay.db-shm beside it out of the way to start with an empty database, then restore a cloud backup.',
    )
    expect(readFileSync(file).equals(garbage)).toBe(true)
  })

  it('names the newest safety copy of earlier restores when a truncated database cannot be opened', async () => {
    const dataDir = dataFolder()
    const file = await realDatabase(dataDir)
    truncateSync(file, 3 * 4096)
    const copies = path.join(dataDir, 'pre-restore')
    mkdirSync(copies)
    for (const name of ['relay-20260101T080000Z.db', 'relay-20260301T080000Z.db', 'notes.txt']) {
      writeFileSync(path.join(copies, name), '')
    }

    const { code, stderr } = await runRelayProcess(dataDir)
    expect(code).toBe(1)
    expect(stderr).not.toContain('    at ')
    const line = stderr
      .trim()
      .split('\n')
      .find((text) => text.includes(file))
    expect(line).toBe(
      `The relay cannot start: its database ${file} is damaged (database disk image is malformed); ` +
        `safety copies taken before earlier restores are in ${copies}${path.sep} (newest relay-20260301T080000Z.db): ` +
        'move relay.db and any relay.db-wal and relay.db-shm beside it out of the way and copy one of them in as ' +
        'relay.db, or start with an empty database and restore a cloud backup.',
    )
  })

  it('recognises damage that only the migration meets, through the error the migration wraps it in', async () => {
    const dataDir = dataFolder()
    const file = await realDatabase(dataDir)
    // Overwrite the migration table's first page: the file opens, reading the migrations fails.
    const inspect = new SQLite(file, { readonly: true })
    const rootOf = "select rootpage from sqlite_schema where name = 'kysely_migration'"
    const { rootpage } = inspect.prepare(rootOf).get() as { rootpage: number }
    const pageSize = inspect.pragma('page_size', { simple: true }) as number
    inspect.close()
    const bytes = readFileSync(file)
    bytes.fill(0x5a, (rootpage - 1) * pageSize, rootpage * pageSize)
    writeFileSync(file, bytes)

    const database = openDatabase(dataDir)
    const failure = await migrateToLatest(database.db, migrations).then(
      () => undefined,
      (err: unknown) => err,
    )
    await database.close()
    expect(failure).toBeInstanceOf(Error)
    expect((failure as Error).message).toMatch(/^database migration failed/)
    expect(damagedDatabaseMessage(failure, dataDir)).toContain(
      `The relay cannot start: its database ${file} is damaged (database disk image is malformed)`,
    )
  })

  it('leaves other start-up failures to their own messages', () => {
    const dataDir = dataFolder()
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
    expect(damagedDatabaseMessage(busy, dataDir)).toBeUndefined()
    expect(damagedDatabaseMessage(new Error('listen EADDRINUSE'), dataDir)).toBeUndefined()
    expect(damagedDatabaseMessage('SQLITE_CORRUPT', dataDir)).toBeUndefined()
  })
})
