import { describe, expect, it } from 'vitest'
import { createTestDatabase } from '../../test/database.js'

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
    const { default: SQLite } = await import('better-sqlite3')
    const reader = new SQLite(database.file, { readonly: true })
    database.sqlite.exec("begin; insert into app_settings (key, value) values ('k', '1')")
    expect(reader.prepare('select count(*) as n from app_settings').get()).toEqual({ n: 0 })
    database.sqlite.exec('commit')
    expect(reader.prepare('select count(*) as n from app_settings').get()).toEqual({ n: 1 })
    reader.close()
    await database.dispose()
  })
})
