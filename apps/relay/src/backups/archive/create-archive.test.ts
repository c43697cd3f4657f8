import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { requirement, tempDir } from '@relay/testkit'
import type SQLite from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase } from '../../../test/database.js'
import { type BackupProgress, type CreateBackupArchiveOptions, createBackupArchive } from './create-archive.js'
import { removeStaleTempFiles } from './temp-files.js'

const unzip = requirement('unzip', spawnSync('unzip', ['-v']).error ? 'the unzip command is not installed' : undefined)

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup()
  }
})

const createdAt = new Date('2026-11-22T13:05:01.234Z')
const allComponents = { includeKeys: true, includeIdentity: true, includeFrameEngine: true }
const noComponents = { includeKeys: false, includeIdentity: false, includeFrameEngine: false }

/** A relay data folder: migrated database, a key file, identity.json and a frame-engine folder. */
async function dataFolder(readingsBytes = 256 * 1024) {
  const database = await createTestDatabase()
  cleanups.push(() => database.dispose())
  addReadings(database.sqlite, readingsBytes)
  const { dataDir } = database
  mkdirSync(path.join(dataDir, 'keys'), { mode: 0o700 })
  writeFileSync(path.join(dataDir, 'keys', 'secrets.key'), Buffer.alloc(32, 7), { mode: 0o600 })
  writeFileSync(path.join(dataDir, 'identity.json'), '{"backendId":"0b7e5a52-2f0e-4c53-9a43-4f4b1d7c9e10"}\n')
  mkdirSync(path.join(dataDir, 'frame-engine', 'models'), { recursive: true })
  writeFileSync(path.join(dataDir, 'frame-engine', 'state.json'), '{"frames":12}')
  writeFileSync(path.join(dataDir, 'frame-engine', 'models', 'weights.bin'), Buffer.alloc(300_000, 3))
  const options = (overrides: Partial<CreateBackupArchiveOptions> = {}): CreateBackupArchiveOptions => ({
    databaseFile: database.file,
    dataDir,
    tempDir: path.join(dataDir, 'tmp'),
    backendId: '0b7e5a52-2f0e-4c53-9a43-4f4b1d7c9e10',
    appVersion: '1.4.0',
    schemaVersion: '0004-auth',
    createdAt,
    components: allComponents,
    packing: { chunkBytes: 64 * 1024 },
    ...overrides,
  })
  return { database, dataDir, tempDir: path.join(dataDir, 'tmp'), options }
}

function addReadings(sqlite: SQLite.Database, bytes: number) {
  sqlite.exec(`create table readings (
    id integer primary key, sensor_id text not null, ts text not null, value real not null, unit text not null)`)
  sqlite
    .prepare(`with recursive n(i) as (select 1 union all select i + 1 from n where i < ?)
      insert into readings (sensor_id, ts, value, unit)
      select 'site-1/line-' || (i % 12) || '/temp-' || (i % 240), strftime('%Y-%m-%dT%H:%M:%fZ', 1790000000 + i * 10, 'unixepoch'),
        round(21 + (i % 97) / 10.0, 1), 'degC' from n`)
    .run(Math.ceil(bytes / 70))
}

function unzipList(file: string): string[] {
  const listed = spawnSync('unzip', ['-Z1', file], { encoding: 'utf8' })
  return listed.stdout.trim().split('\n')
}

function unzipEntry(file: string, name: string): Buffer {
  return spawnSync('unzip', ['-p', file, name], { maxBuffer: 512 * 1024 * 1024 }).stdout
}

/** The archive's relay.db as a database file of its own, closed and removed after the test. */
async function unpackedDatabase(archiveFile: string, options: { readonly?: boolean } = {}) {
  const dir = tempDir('relay-unpacked-')
  cleanups.push(() => dir.remove())
  const copy = path.join(dir.path, 'relay.db')
  writeFileSync(copy, unzipEntry(archiveFile, 'relay.db'))
  const { default: Database } = await import('better-sqlite3')
  const sqlite = new Database(copy, options)
  cleanups.push(() => sqlite.close())
  return sqlite
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

describe('backup archive', () => {
  it.skipIf(!unzip.available)(
    'packs the snapshot, the components and a manifest into a ZIP unzip accepts',
    async () => {
      const { dataDir, tempDir, options } = await dataFolder()
      const progress: BackupProgress[] = []
      const archive = await createBackupArchive(options({ onProgress: (event) => progress.push(event) }))

      expect(archive.filename).toBe('relay-backup-20261122T130501Z.zip')
      expect(path.dirname(archive.file)).toBe(tempDir)
      expect(readdirSync(tempDir)).toEqual([path.basename(archive.file)])
      const bytes = readFileSync(archive.file)
      expect(archive.size).toBe(bytes.length)
      expect(archive.sha256).toBe(sha256(bytes))
      const test = spawnSync('unzip', ['-t', archive.file], { encoding: 'utf8' })
      expect(test.stdout).toContain('No errors detected')

      const components = [
        'frame-engine/models/weights.bin',
        'frame-engine/state.json',
        'identity.json',
        'keys/secrets.key',
      ]
      expect(unzipList(archive.file)).toEqual([
        'relay.db',
        'identity.json',
        'keys/secrets.key',
        ...components.slice(0, 2),
        'manifest.json',
      ])
      // Entries after the database follow the flags' order, each folder in name order; the manifest is last.
      const manifest = JSON.parse(unzipEntry(archive.file, 'manifest.json').toString('utf8'))
      expect(manifest).toEqual(archive.manifest)
      expect(manifest).toMatchObject({
        formatVersion: 1,
        appVersion: '1.4.0',
        backendId: '0b7e5a52-2f0e-4c53-9a43-4f4b1d7c9e10',
        createdAt: '2026-11-22T13:05:01.234Z',
        schemaVersion: '0004-auth',
      })
      expect(manifest.entries.map((entry: { name: string }) => entry.name).sort()).toEqual([...components, 'relay.db'])
      for (const entry of manifest.entries) {
        const packed = unzipEntry(archive.file, entry.name)
        expect(entry).toEqual({ name: entry.name, size: packed.length, sha256: sha256(packed) })
        if (entry.name !== 'relay.db') {
          expect(packed.equals(readFileSync(path.join(dataDir, ...entry.name.split('/'))))).toBe(true)
        }
      }
      const sizes = manifest.entries.reduce((sum: number, entry: { size: number }) => sum + entry.size, 0)
      expect(archive.uncompressedSize).toBe(sizes + unzipEntry(archive.file, 'manifest.json').length)

      // The key keeps its owner-only mode in the archive.
      const info = spawnSync('zipinfo', [archive.file, 'keys/secrets.key'], { encoding: 'utf8' })
      expect(info.stdout).toMatch(/^-rw-------/)
      expect(progress[0]?.stage).toBe('snapshot')
      const packing = progress.filter((event) => event.stage === 'packing')
      expect(packing.length).toBeGreaterThan(2)
      expect(packing.at(-1)?.bytesDone).toBe(packing.at(-1)?.bytesTotal)
    },
  )

  it.skipIf(!unzip.available)('packs the live rows into relay.db', async () => {
    const { database, options } = await dataFolder()
    await database.db.insertInto('app_settings').values({ key: 'marker', value: '"before the backup"' }).execute()
    const archive = await createBackupArchive(options())
    const sqlite = await unpackedDatabase(archive.file, { readonly: true })
    expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(sqlite.prepare("select value from app_settings where key = 'marker'").get()).toEqual({
      value: '"before the backup"',
    })
    expect(sqlite.prepare('select count(*) as n from readings').get()).toEqual(
      database.sqlite.prepare('select count(*) as n from readings').get(),
    )
  })

  it.skipIf(!unzip.available)('leaves what deleted rows left behind out of relay.db', async () => {
    const { database, options } = await dataFolder()
    const secret = 'deleted-secret-7f3a91'
    database.sqlite.exec('create table scratch (id integer primary key, note text not null)')
    database.sqlite
      .prepare(`with recursive n(i) as (select 1 union all select i + 1 from n where i < 2000)
        insert into scratch (note) select ? || '-' || i from n`)
      .run(secret)
    database.sqlite.exec('delete from scratch')
    database.sqlite.pragma('wal_checkpoint(TRUNCATE)')
    expect(database.sqlite.pragma('freelist_count', { simple: true })).toBeGreaterThan(5)
    expect(readFileSync(database.file).includes(secret)).toBe(true)

    const archive = await createBackupArchive(options())
    expect(unzipEntry(archive.file, 'relay.db').includes(secret)).toBe(false)
    const sqlite = await unpackedDatabase(archive.file)
    // The freelist itself is intact: the copy checks clean and reuses the pages.
    expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(sqlite.pragma('freelist_count', { simple: true })).toBe(
      database.sqlite.pragma('freelist_count', { simple: true }),
    )
    sqlite.exec("insert into scratch (note) values ('after restore')")
    expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok')
  })

  it.skipIf(!unzip.available)('packs a database churned by inserts, updates and deletes row for row', async () => {
    const { database, options } = await dataFolder(0)
    const { sqlite } = database
    sqlite.exec('create table churn (id integer primary key, tag text not null, body blob not null)')
    sqlite.exec('create index churn_tag on churn (tag)')
    let seed = 7
    const random = () => {
      seed = (seed * 48271) % 2147483647
      return seed / 2147483647
    }
    const insert = sqlite.prepare('insert into churn (tag, body) values (?, randomblob(?))')
    for (let round = 0; round < 20; round++) {
      sqlite.transaction(() => {
        for (let i = 0; i < 200; i++) {
          // Sizes from a few bytes to several pages, so overflow pages come and go too.
          insert.run(`tag-${Math.floor(random() * 50)}`, Math.floor(random() * random() * 20_000) + 1)
        }
        sqlite.prepare('delete from churn where id % 7 = ?').run(round % 7)
        sqlite
          .prepare('update churn set body = randomblob(?) where id % 11 = ?')
          .run(Math.floor(random() * 3000) + 1, round % 11)
      })()
    }
    const digest = (db: SQLite.Database) =>
      sha256(Buffer.from(JSON.stringify(db.prepare('select id, tag, hex(body) as body from churn order by id').all())))

    const archive = await createBackupArchive(options())
    const unpacked = await unpackedDatabase(archive.file)
    expect(unpacked.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(digest(unpacked)).toBe(digest(sqlite))
    // Page for page (a VACUUM INTO copy would have no free pages): the scrubbed bytes are what was checked.
    expect(sqlite.pragma('freelist_count', { simple: true })).toBeGreaterThan(0)
    expect(unpacked.pragma('freelist_count', { simple: true })).toBe(sqlite.pragma('freelist_count', { simple: true }))
  })

  it.skipIf(!unzip.available).each([
    { components: noComponents, expected: [] },
    { components: { ...noComponents, includeKeys: true }, expected: ['keys/secrets.key'] },
    { components: { ...noComponents, includeIdentity: true }, expected: ['identity.json'] },
    {
      components: { ...noComponents, includeFrameEngine: true },
      expected: ['frame-engine/models/weights.bin', 'frame-engine/state.json'],
    },
  ])('packs only the components asked for: $expected', async ({ components, expected }) => {
    const { options } = await dataFolder()
    const archive = await createBackupArchive(options({ components }))
    expect(unzipList(archive.file).sort()).toEqual(['manifest.json', 'relay.db', ...expected].sort())
    expect(archive.manifest.entries.map((entry) => entry.name).sort()).toEqual(['relay.db', ...expected].sort())
  })

  it('packs nothing for a component folder that does not exist', async () => {
    const { dataDir, options } = await dataFolder()
    const emptyDir = path.join(dataDir, 'elsewhere')
    mkdirSync(emptyDir)
    const archive = await createBackupArchive(options({ dataDir: emptyDir }))
    expect(archive.manifest.entries.map((entry) => entry.name)).toEqual(['relay.db'])
  })

  it('stores neither symbolic links nor what they point to', async () => {
    const { dataDir, options } = await dataFolder()
    const outside = tempDir('relay-outside-')
    cleanups.push(() => outside.remove())
    writeFileSync(path.join(outside.path, 'private.txt'), 'not part of the relay')
    symlinkSync(path.join(outside.path, 'private.txt'), path.join(dataDir, 'frame-engine', 'linked.txt'))
    symlinkSync(outside.path, path.join(dataDir, 'frame-engine', 'linked-folder'))
    const archive = await createBackupArchive(options())
    const names = archive.manifest.entries.map((entry) => entry.name)
    expect(names.filter((name) => name.includes('linked'))).toEqual([])
    expect(names).toContain('frame-engine/state.json')
  })

  describe('leaves no temp file behind', () => {
    it('when aborted during the snapshot', async () => {
      const { tempDir, options } = await dataFolder(8 * 1024 * 1024)
      const controller = new AbortController()
      // The first progress event comes as the snapshot's copy starts.
      const onProgress = ({ stage }: BackupProgress) => {
        if (stage === 'snapshot') {
          controller.abort(new Error('stopped'))
        }
      }
      await expect(createBackupArchive(options({ signal: controller.signal, onProgress }))).rejects.toThrow('stopped')
      expect(readdirSync(tempDir)).toEqual([])
    })

    it('when aborted during the packing', async () => {
      const { tempDir, options } = await dataFolder(4 * 1024 * 1024)
      const controller = new AbortController()
      const onProgress = ({ stage, bytesDone }: BackupProgress) => {
        if (stage === 'packing' && bytesDone > 0) {
          controller.abort(new Error('stopped while packing'))
        }
      }
      await expect(createBackupArchive(options({ signal: controller.signal, onProgress }))).rejects.toThrow(
        'stopped while packing',
      )
      expect(readdirSync(tempDir)).toEqual([])
    })

    it('when the database cannot be copied', async () => {
      const { dataDir, tempDir, options } = await dataFolder()
      const notADatabase = path.join(dataDir, 'not-a-database.db')
      writeFileSync(notADatabase, 'plain text, not SQLite')
      await expect(createBackupArchive(options({ databaseFile: notADatabase }))).rejects.toThrow(/SQLite/)
      expect(readdirSync(tempDir)).toEqual([])
    })

    it('when a component cannot be packed', async () => {
      const { dataDir, tempDir, options } = await dataFolder()
      // A name restore would refuse: the archive is not made at all.
      writeFileSync(path.join(dataDir, 'frame-engine', 'back\\slash.txt'), 'x')
      await expect(createBackupArchive(options())).rejects.toThrow(/Cannot back up/)
      expect(readdirSync(tempDir)).toEqual([])
    })

    it('when a component vanishes while it is packed', async () => {
      const { dataDir, tempDir, options } = await dataFolder()
      const onProgress = ({ stage }: BackupProgress) => {
        if (stage === 'packing') {
          rmSync(path.join(dataDir, 'frame-engine', 'state.json'), { force: true })
        }
      }
      await expect(createBackupArchive(options({ onProgress }))).rejects.toThrow(/ENOENT/)
      expect(readdirSync(tempDir)).toEqual([])
    })

    it('when the temp folder cannot be written', async () => {
      const { dataDir, options } = await dataFolder()
      const notAFolder = path.join(dataDir, 'tmp-is-a-file')
      writeFileSync(notAFolder, 'x')
      await expect(createBackupArchive(options({ tempDir: notAFolder }))).rejects.toThrow(/EEXIST|ENOTDIR/)
      expect(readFileSync(notAFolder, 'utf8')).toBe('x')
    })
  })

  it('removes what an interrupted backup left, and nothing else', async () => {
    const dir = tempDir('relay-stale-')
    cleanups.push(() => dir.remove())
    for (const name of [
      'relay-backup-20261122T130501Z-0a1b2c3d4e5f.snapshot.db',
      'relay-backup-20261122T130501Z-0a1b2c3d4e5f.snapshot.db-journal',
      'relay-backup-20261122T130501Z-0a1b2c3d4e5f.zip.partial',
      'relay-backup-20261121T010000Z-9f8e7d6c5b4a.zip',
      'someone-elses.tmp',
    ]) {
      writeFileSync(path.join(dir.path, name), 'x')
    }
    const removed = await removeStaleTempFiles(dir.path)
    expect(removed).toHaveLength(4)
    expect(readdirSync(dir.path)).toEqual(['someone-elses.tmp'])
    expect(await removeStaleTempFiles(path.join(dir.path, 'missing'))).toEqual([])
  })

  it('keeps the event loop responsive while it snapshots and packs a 50 MB database', async () => {
    const { options } = await dataFolder(50 * 1024 * 1024)
    const delay = monitorEventLoopDelay({ resolution: 10 })
    delay.enable()
    let ticks = 0
    const timer = setInterval(() => ticks++, 10)
    const started = performance.now()
    const archive = await createBackupArchive(options({ packing: {} }))
    const elapsed = performance.now() - started
    clearInterval(timer)
    delay.disable()
    expect(existsSync(archive.file)).toBe(true)
    // The budget is 50 ms (the bench reports the figure); this bound only has to catch work that
    // holds the loop for a whole step (a snapshot, an integrity check, a synchronous deflate), and
    // stay clear of a machine busy with other tests.
    expect(delay.max / 1e6).toBeLessThan(250)
    expect(ticks).toBeGreaterThan(elapsed / 10 / 4)
  })
})
