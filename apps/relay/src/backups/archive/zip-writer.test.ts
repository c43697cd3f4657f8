import { spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import path from 'node:path'
import { requirement, tempDir } from '@relay/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import yauzl from 'yauzl'
import { bufferSource, type ChunkSource, createZipWriter } from './zip-writer.js'

const unzip = requirement('unzip', spawnSync('unzip', ['-v']).error ? 'the unzip command is not installed' : undefined)

const folders: { remove(): void }[] = []
afterEach(() => {
  for (const folder of folders.splice(0)) {
    folder.remove()
  }
})

/** The bytes of `name`, handed out at most `pieceBytes` per read (short reads make short chunks). */
type Content = { name: string; data: Buffer; pieceBytes: number }

/** Sensor-like text: repeats enough to deflate well, varies enough to need more than one block. */
function readings(bytes: number): Buffer {
  const lines: string[] = []
  let length = 0
  for (let i = 0; length < bytes; i++) {
    const line = `${i},site-${i % 4}/temp-${i % 240},2026-11-22T13:${String(i % 60).padStart(2, '0')}:00Z,${(21 + (i % 97) / 10).toFixed(1)},degC\n`
    lines.push(line)
    length += line.length
  }
  return Buffer.from(lines.join('')).subarray(0, bytes)
}

function piecewise(data: Buffer, pieceBytes: number): ChunkSource {
  let position = 0
  return {
    async read(buffer) {
      const bytes = data.copy(buffer, 0, position, Math.min(data.length, position + pieceBytes))
      position += bytes
      return bytes
    },
  }
}

async function writeZip(contents: Content[], options: { forceZip64?: boolean; concurrency?: number } = {}) {
  const dir = tempDir('relay-zip-')
  folders.push(dir)
  const file = path.join(dir.path, 'test.zip')
  const handle = await open(file, 'w')
  const zip = createZipWriter(handle, {
    level: 6,
    concurrency: options.concurrency ?? 3,
    chunkBytes: 256 * 1024,
    forceZip64: options.forceZip64,
  })
  const results = []
  for (const { name, data, pieceBytes } of contents) {
    results.push(
      await zip.addEntry(name, piecewise(data, pieceBytes), {
        mtime: new Date('2026-11-22T13:05:01Z'),
        mode: 0o600,
        expectedSize: data.length,
      }),
    )
  }
  const archive = await zip.finish()
  await handle.close()
  return { file, results, archive }
}

async function readBack(file: string): Promise<Map<string, { data: Buffer; entry: yauzl.Entry }>> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false, strictFileNames: true })
  const found = new Map<string, { data: Buffer; entry: yauzl.Entry }>()
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      zip
        .openReadStreamPromise(entry)
        .then(async (stream) => {
          const chunks: Buffer[] = []
          for await (const chunk of stream) {
            chunks.push(chunk as Buffer)
          }
          found.set(entry.fileName, { data: Buffer.concat(chunks), entry })
          zip.readEntry()
        })
        .catch(reject)
    })
    zip.once('end', () => resolve())
    zip.once('error', reject)
    zip.readEntry()
  })
  zip.close()
  return found
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

const contents: Content[] = [
  { name: 'relay.db', data: readings(3 * 1024 * 1024 + 12_345), pieceBytes: Number.POSITIVE_INFINITY },
  // Chunks smaller than deflate's 32 KiB window: each one's dictionary spans several before it.
  { name: 'frame-engine/small-chunks.csv', data: readings(200_000), pieceBytes: 5000 },
  { name: 'keys/secrets.key', data: randomBytes(700_000), pieceBytes: 100_000 },
  { name: 'frame-engine/empty', data: Buffer.alloc(0), pieceBytes: 1024 },
  { name: 'identity.json', data: Buffer.from('{"backendId":"3f1c…"}'), pieceBytes: 1024 },
]

describe('ZIP writer', () => {
  it('deflates entries in parallel chunks into one archive that yauzl reads back byte for byte', async () => {
    const { file, results, archive } = await writeZip(contents)
    const found = await readBack(file)
    expect([...found.keys()]).toEqual(contents.map((content) => content.name))
    for (const [index, content] of contents.entries()) {
      const read = found.get(content.name)
      expect(read?.data.equals(content.data)).toBe(true)
      expect(results[index]).toMatchObject({
        name: content.name,
        size: content.data.length,
        sha256: sha256(content.data),
      })
      expect(read?.entry.uncompressedSize).toBe(content.data.length)
      expect(read?.entry.compressedSize).toBe(results[index]?.compressedSize)
      expect((read?.entry.externalFileAttributes ?? 0) >>> 16).toBe(0o100600)
    }
    expect(archive.size).toBe(readFileSync(file).length)
    expect(archive.sha256).toBe(sha256(readFileSync(file)))
    // The sensor text packs well, the random key not at all: both come out right.
    expect(results[0]?.compressedSize).toBeLessThan((contents[0]?.data.length ?? 0) / 4)
  })

  it.skipIf(!unzip.available)('writes archives that Info-ZIP tests clean, CRC-32 included', async () => {
    const { file } = await writeZip(contents, { concurrency: 1 })
    const test = spawnSync('unzip', ['-t', file], { encoding: 'utf8' })
    expect(test.stdout).toContain('No errors detected')
    expect(test.status).toBe(0)
  })

  it.skipIf(!unzip.available)('writes ZIP64 records that Info-ZIP and yauzl read', async () => {
    const { file } = await writeZip(contents, { forceZip64: true })
    const test = spawnSync('unzip', ['-t', file], { encoding: 'utf8' })
    expect(test.stdout).toContain('No errors detected')
    const found = await readBack(file)
    for (const content of contents) {
      expect(found.get(content.name)?.data.equals(content.data)).toBe(true)
    }
  })

  it('refuses a second entry while one is being written', async () => {
    const dir = tempDir('relay-zip-')
    folders.push(dir)
    const handle = await open(path.join(dir.path, 'test.zip'), 'w')
    const zip = createZipWriter(handle, { level: 6, concurrency: 2, chunkBytes: 1024 })
    const source = bufferSource(Buffer.from('a'))
    // The first entry's reads wait until the second was refused: it is being written the whole time.
    let unblock = () => {}
    const blocked = new Promise<void>((resolve) => {
      unblock = resolve
    })
    const held: ChunkSource = { read: (buffer) => blocked.then(() => source.read(buffer)) }
    const first = zip.addEntry('relay.db', held, { mtime: new Date(), expectedSize: 1 })
    const second = zip.addEntry('identity.json', bufferSource(Buffer.from('b')), { mtime: new Date(), expectedSize: 1 })
    await expect(second).rejects.toThrow(/one at a time/)
    unblock()
    await first
    await handle.close()
  })
})
