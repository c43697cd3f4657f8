import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import path from 'node:path'
import { tempDir } from '@relay/testkit'
import SQLite from 'better-sqlite3'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase } from '../../../test/database.js'
import { type BackupArchive, createBackupArchive } from './create-archive.js'
import type { BackupManifest } from './manifest.js'
import { BackupArchiveError, extractBackupArchive, inspectBackupArchive } from './read-archive.js'
import { bufferSource, createZipWriter } from './zip-writer.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup()
  }
})

function folder(prefix = 'relay-archive-') {
  const dir = tempDir(prefix)
  cleanups.push(() => dir.remove())
  return dir.path
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

// One real backup for the whole file: its entries are the material every tampered archive is made of.
let source: { archive: BackupArchive; entries: Map<string, Buffer>; dataDir: string; remove(): void }
beforeAll(async () => {
  const database = await createTestDatabase()
  await database.db.insertInto('app_settings').values({ key: 'marker', value: '"in the backup"' }).execute()
  database.sqlite.exec(`create table readings (id integer primary key, ts text not null, value real not null);
    with recursive n(i) as (select 1 union all select i + 1 from n where i < 20000)
    insert into readings (ts, value) select strftime('%Y-%m-%dT%H:%M:%fZ', 1790000000 + i * 10, 'unixepoch'), i % 97 from n;`)
  const { dataDir } = database
  mkdirSync(path.join(dataDir, 'keys'))
  writeFileSync(path.join(dataDir, 'keys', 'secrets.key'), Buffer.alloc(32, 9), { mode: 0o600 })
  writeFileSync(path.join(dataDir, 'identity.json'), '{"backendId":"0b7e5a52-2f0e-4c53-9a43-4f4b1d7c9e10"}\n')
  mkdirSync(path.join(dataDir, 'frame-engine', 'models'), { recursive: true })
  writeFileSync(path.join(dataDir, 'frame-engine', 'models', 'weights.bin'), Buffer.alloc(100_000, 1))
  const archive = await createBackupArchive({
    databaseFile: database.file,
    dataDir,
    tempDir: path.join(dataDir, 'tmp'),
    backendId: '0b7e5a52-2f0e-4c53-9a43-4f4b1d7c9e10',
    appVersion: '1.4.0',
    schemaVersion: '0004-auth',
    createdAt: new Date('2026-11-22T13:05:01Z'),
    components: { includeKeys: true, includeIdentity: true, includeFrameEngine: true },
  })
  const staged = await extractBackupArchive(archive.file, archive.manifest, path.join(dataDir, 'staged'))
  const entries = new Map(
    archive.manifest.entries.map((entry) => [entry.name, readFileSync(path.join(staged.root, entry.name))]),
  )
  source = { archive, entries, dataDir, remove: () => database.dispose() }
  return () => source.remove()
})

type Content = { name: string; data: Buffer }

/** An archive of `contents` with a manifest that lists them, as `edit` leaves it (null: no manifest). */
async function buildArchive(
  contents: Content[],
  edit: (manifest: BackupManifest) => BackupManifest | string | null = (manifest) => manifest,
): Promise<string> {
  const file = path.join(folder(), 'backup.zip')
  const handle = await open(file, 'w')
  const zip = createZipWriter(handle, { level: 6, concurrency: 2, chunkBytes: 64 * 1024 })
  for (const { name, data } of contents) {
    await zip.addEntry(name, bufferSource(data), { mtime: new Date(), expectedSize: data.length })
  }
  const edited = edit({
    ...source.archive.manifest,
    entries: contents.map(({ name, data }) => ({ name, size: data.length, sha256: sha256(data) })),
  })
  if (edited !== null) {
    const manifest = Buffer.from(typeof edited === 'string' ? edited : JSON.stringify(edited))
    await zip.addEntry('manifest.json', bufferSource(manifest), { mtime: new Date(), expectedSize: manifest.length })
  }
  await zip.finish()
  await handle.close()
  return file
}

function genuine(): Content[] {
  return [...source.entries].map(([name, data]) => ({ name, data }))
}

/** Calls `edit` on each central directory record (at its offset in `bytes`) of a small archive. */
function editCentralDirectory(file: string, edit: (bytes: Buffer, record: number, name: string) => void) {
  const bytes = readFileSync(file)
  const end = bytes.length - 22
  expect(bytes.readUInt32LE(end)).toBe(0x06054b50)
  let record = bytes.readUInt32LE(end + 16)
  while (bytes.readUInt32LE(record) === 0x02014b50) {
    const nameLength = bytes.readUInt16LE(record + 28)
    const name = bytes.toString('utf8', record + 46, record + 46 + nameLength)
    edit(bytes, record, name)
    record += 46 + nameLength + bytes.readUInt16LE(record + 30) + bytes.readUInt16LE(record + 32)
  }
  writeFileSync(file, bytes)
}

/** Inspect and extract both refuse `file`, and extraction leaves nothing in its staging folder. */
async function expectRefused(file: string, message: RegExp, manifest = source.archive.manifest) {
  await expect(inspectBackupArchive(file)).rejects.toThrow(message)
  await expect(inspectBackupArchive(file)).rejects.toBeInstanceOf(BackupArchiveError)
  const staging = path.join(folder(), 'staged')
  await expect(extractBackupArchive(file, manifest, staging)).rejects.toThrow(message)
  expect(existsSync(staging)).toBe(false)
}

describe('backup archive reader', () => {
  it('verifies an archive and unpacks every entry into the staging folder', async () => {
    const { archive } = source
    const manifest = await inspectBackupArchive(archive.file, {
      expectedSha256: archive.sha256,
      expectedSize: archive.size,
    })
    expect(manifest).toEqual(archive.manifest)

    const staging = path.join(folder(), 'staged')
    const staged = await extractBackupArchive(archive.file, manifest, staging)
    expect(staged).toEqual({
      root: staging,
      databaseFile: path.join(staging, 'relay.db'),
      files: ['relay.db', 'identity.json', 'keys/secrets.key', 'frame-engine/models/weights.bin'],
    })
    for (const name of ['identity.json', 'keys/secrets.key', 'frame-engine/models/weights.bin']) {
      expect(readFileSync(path.join(staging, name)).equals(readFileSync(path.join(source.dataDir, name)))).toBe(true)
    }
    expect(statSync(path.join(staging, 'keys', 'secrets.key')).mode & 0o777).toBe(0o600)
    const restored = new SQLite(staged.databaseFile, { readonly: true })
    cleanups.push(() => restored.close())
    expect(restored.prepare("select value from app_settings where key = 'marker'").get()).toEqual({
      value: '"in the backup"',
    })
    expect(restored.prepare('select count(*) as n from readings').get()).toEqual({ n: 20000 })
  })

  it('unpacks into an empty folder that already exists, and refuses one that is not empty', async () => {
    const staging = folder('relay-staging-')
    await expect(extractBackupArchive(source.archive.file, source.archive.manifest, staging)).resolves.toMatchObject({
      root: staging,
    })
    await expect(extractBackupArchive(source.archive.file, source.archive.manifest, staging)).rejects.toThrow(
      /not empty/,
    )
  })

  it('refuses a file whose size or SHA-256 is not what the cloud recorded', async () => {
    const { archive } = source
    await expect(inspectBackupArchive(archive.file, { expectedSize: archive.size + 1 })).rejects.toThrow(/bytes/)
    await expect(inspectBackupArchive(archive.file, { expectedSha256: 'a'.repeat(64) })).rejects.toThrow(/checksum/)
  })

  it('refuses an archive with a flipped byte in the database entry', async () => {
    const file = path.join(folder(), 'flipped.zip')
    const bytes = readFileSync(source.archive.file)
    // relay.db is the first entry and most of the archive.
    const at = Math.floor(bytes.length / 3)
    bytes.writeUInt8(bytes.readUInt8(at) ^ 0x01, at)
    writeFileSync(file, bytes)
    await expectRefused(file, /relay\.db|damaged/)
    await expect(inspectBackupArchive(file, { expectedSha256: source.archive.sha256 })).rejects.toThrow(/checksum/)
  })

  it('refuses an archive cut short', async () => {
    const bytes = readFileSync(source.archive.file)
    for (const length of [bytes.length - 10, Math.floor(bytes.length / 2), 100]) {
      const file = path.join(folder(), 'truncated.zip')
      writeFileSync(file, bytes.subarray(0, length))
      await expectRefused(file, /damaged|not a relay backup/)
    }
  })

  it('refuses a manifest whose checksum does not match its entry', async () => {
    const planted = sha256(Buffer.from('another key'))
    const edit = (manifest: BackupManifest): BackupManifest => ({
      ...manifest,
      entries: manifest.entries.map((entry) =>
        entry.name === 'keys/secrets.key' ? { ...entry, sha256: planted } : entry,
      ),
    })
    const file = await buildArchive(genuine(), edit)
    await expectRefused(file, /keys\/secrets\.key does not match/, edit(source.archive.manifest))
  })

  it('refuses to extract an archive whose manifest differs from the one inspected', async () => {
    const file = await buildArchive(genuine(), (manifest) => ({ ...manifest, schemaVersion: '0001-app-settings' }))
    const inspected = await inspectBackupArchive(file)
    const staging = path.join(folder(), 'staged')
    await expect(extractBackupArchive(file, { ...inspected, schemaVersion: '0004-auth' }, staging)).rejects.toThrow(
      /changed since it was inspected/,
    )
    expect(existsSync(staging)).toBe(false)
  })

  it.each([
    ['not JSON', () => '{"formatVersion": 1,'],
    ['from a newer format', (manifest: BackupManifest) => ({ ...manifest, formatVersion: 2 })],
    ['without the database', (manifest: BackupManifest) => ({ ...manifest, entries: [] })],
    ['with an unknown field', (manifest: BackupManifest) => ({ ...manifest, extra: true })],
  ])('refuses a manifest %s', async (_label, edit) => {
    const file = await buildArchive(genuine(), edit as (manifest: BackupManifest) => BackupManifest | string)
    await expectRefused(file, /manifest/)
  })

  it('refuses an archive without a manifest', async () => {
    await expectRefused(await buildArchive(genuine(), () => null), /no manifest\.json/)
  })

  it('refuses an entry the manifest does not list', async () => {
    const file = await buildArchive(
      [...genuine(), { name: 'keys/extra.key', data: Buffer.from('planted') }],
      (manifest) => ({
        ...manifest,
        entries: manifest.entries.filter((entry) => entry.name !== 'keys/extra.key'),
      }),
    )
    await expectRefused(file, /does not list: keys\/extra\.key/)
  })

  it('refuses a manifest that lists an entry the archive lacks', async () => {
    const file = await buildArchive(genuine(), (manifest) => ({
      ...manifest,
      entries: [...manifest.entries, { name: 'keys/missing.key', size: 1, sha256: 'b'.repeat(64) }],
    }))
    await expectRefused(file, /lacks keys\/missing\.key/)
  })

  it.each([
    ['../evil', /relative path|segment/],
    ['keys/../../evil', /relative path|segment/],
    ['/etc/cron.d/evil', /absolute/],
    ['C:/evil', /absolute/],
    ['keys\\..\\evil', /invalid characters|backslash/],
    ['notes.txt', /not part of a relay backup/],
    ['tmp/relay-backup.zip', /not part of a relay backup/],
    ['keys/', /segment/],
    ['frame-engine//double', /segment/],
  ])('refuses an entry named %s', async (name, message) => {
    const file = await buildArchive([...genuine(), { name, data: Buffer.from('planted') }])
    await expectRefused(file, message)
  })

  it('refuses a symbolic link entry', async () => {
    const file = await buildArchive(genuine())
    editCentralDirectory(file, (bytes, record, name) => {
      if (name === 'frame-engine/models/weights.bin') {
        bytes.writeUInt32LE((0o120777 << 16) >>> 0, record + 38)
      }
    })
    await expectRefused(file, /link, folder or special file/)
  })

  it('refuses an entry stored twice', async () => {
    const key = { name: 'keys/secrets.key', data: Buffer.alloc(32, 9) }
    const file = await buildArchive([...genuine(), key], (manifest) => ({
      ...manifest,
      entries: manifest.entries.slice(0, -1),
    }))
    await expectRefused(file, /keys\/secrets\.key twice/)
  })

  it('refuses a name that is a file and a folder at once', async () => {
    const file = await buildArchive([
      ...genuine(),
      { name: 'frame-engine/models', data: Buffer.from('a file where a folder is') },
    ])
    await expectRefused(file, /frame-engine\/models as a file and a folder/)
  })

  it('refuses entries that share their data', async () => {
    // Two names for the same stored bytes: how a small archive unpacks to far more than it holds.
    const contents = [...genuine(), { name: 'keys/other.key', data: Buffer.alloc(32, 9) }]
    const file = await buildArchive(contents)
    let keyOffset = 0
    editCentralDirectory(file, (bytes, record, name) => {
      if (name === 'keys/secrets.key') {
        keyOffset = bytes.readUInt32LE(record + 42)
      }
      if (name === 'keys/other.key') {
        bytes.writeUInt32LE(keyOffset, record + 42)
      }
    })
    await expectRefused(file, /overlap/)
  })

  it('refuses an entry that would unpack to hundreds of times its size', async () => {
    const zeros = { name: 'frame-engine/zeros.bin', data: Buffer.alloc(20 * 1024 * 1024) }
    const file = await buildArchive([...genuine(), zeros])
    await expectRefused(file, /times its packed size/)
    await expect(inspectBackupArchive(file, { limits: { maxRatio: 2000 } })).resolves.toBeDefined()
    await expect(
      inspectBackupArchive(file, { limits: { maxRatio: 2000, maxTotalBytes: 1024 * 1024 } }),
    ).rejects.toThrow(/more than/)
  })

  it('refuses a database that fails its integrity check, even with matching checksums', async () => {
    const database = Buffer.from(source.entries.get('relay.db') as Buffer)
    database.fill(0, 4096 * 2, 4096 * 3)
    const contents = genuine().map((content) =>
      content.name === 'relay.db' ? { name: 'relay.db', data: database } : content,
    )
    const file = await buildArchive(contents)
    const manifest = await inspectBackupArchive(file)
    const staging = path.join(folder(), 'staged')
    await expect(extractBackupArchive(file, manifest, staging)).rejects.toThrow(
      /database in the backup archive is damaged/,
    )
    expect(existsSync(staging)).toBe(false)
  })

  it('leaves an existing staging folder empty when extraction fails', async () => {
    const file = await buildArchive(genuine(), (manifest) => ({
      ...manifest,
      entries: manifest.entries.map((entry) =>
        entry.name === 'frame-engine/models/weights.bin' ? { ...entry, sha256: 'c'.repeat(64) } : entry,
      ),
    }))
    const staging = folder('relay-staging-')
    const manifest = JSON.parse(JSON.stringify(source.archive.manifest)) as BackupManifest
    const weights = manifest.entries.find((entry) => entry.name === 'frame-engine/models/weights.bin')
    if (weights) {
      weights.sha256 = 'c'.repeat(64)
    }
    await expect(extractBackupArchive(file, manifest, staging)).rejects.toThrow(/weights\.bin does not match/)
    expect(readdirSync(staging)).toEqual([])
  })
})
