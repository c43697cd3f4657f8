import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import path from 'node:path'
import { requirement, tempDir } from '@relay/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { readZipEntries } from '../../../test/zip-entries.js'
import {
  BackupDecryptionError,
  type DecryptionFailure,
  decryptBackupArchive,
  defaultScrypt,
  type EncryptionHeader,
  encryptBackupArchive,
  encryptedPayloadEntry,
  encryptionHeaderEntry,
  isEncryptedBackup,
} from './encryption.js'
import { bufferSource, createZipWriter } from './zip-writer.js'

const unzip = requirement('unzip', spawnSync('unzip', ['-v']).error ? 'the unzip command is not installed' : undefined)

const passphrase = 'correct horse battery staple'
const chunkBytes = 64 * 1024
const sealedChunk = chunkBytes + 16
/** Cheap key derivation: these tests are about the format, not the cost of guessing. */
const fast = { chunkBytes, scrypt: { N: 2 ** 12, r: 8, p: 1 } }

const folders: { remove(): void }[] = []
afterEach(() => {
  for (const folder of folders.splice(0)) {
    folder.remove()
  }
})

/** A folder holding `plain.bin` of `bytes` random bytes, and that file encrypted as `backup.zip`. */
async function encrypted(bytes = 4 * chunkBytes + 1000, options = fast) {
  const folder = tempDir('relay-encryption-')
  folders.push(folder)
  const plainFile = path.join(folder.path, 'plain.bin')
  const plain = randomBytes(bytes)
  writeFileSync(plainFile, plain)
  const file = path.join(folder.path, 'backup.zip')
  const written = await encryptBackupArchive(plainFile, file, passphrase, options)
  return { dir: folder.path, plain, file, written }
}

/** The two entries of an encrypted archive, and how each is stored. */
async function entriesOf(file: string): Promise<{ header: Buffer; payload: Buffer; methods: number[] }> {
  const entries = await readZipEntries(file)
  return {
    header: entries.get(encryptionHeaderEntry)?.bytes ?? Buffer.alloc(0),
    payload: entries.get(encryptedPayloadEntry)?.bytes ?? Buffer.alloc(0),
    methods: [...entries.values()].map((entry) => entry.compressionMethod),
  }
}

/** Writes `header` and `payload` as a well-formed archive again: what a tamperer who knows ZIP would make. */
async function rewrap(file: string, header: Buffer, payload: Buffer): Promise<void> {
  const handle = await open(file, 'w')
  const zip = createZipWriter(handle, { level: 1, concurrency: 1, chunkBytes: sealedChunk })
  const options = { mtime: new Date(), store: true }
  await zip.addEntry(encryptionHeaderEntry, bufferSource(header), { ...options, expectedSize: header.length })
  await zip.addEntry(encryptedPayloadEntry, bufferSource(payload), { ...options, expectedSize: payload.length })
  await zip.finish()
  await handle.close()
}

async function changeEntries(
  file: string,
  change: (entries: { header: Buffer; payload: Buffer }) => { header?: Buffer; payload?: Buffer },
) {
  const entries = await entriesOf(file)
  const changed = { ...entries, ...change(entries) }
  await rewrap(file, changed.header, changed.payload)
}

function flip(bytes: Buffer, at: number): Buffer {
  const copy = Buffer.from(bytes)
  copy.writeUInt8(copy.readUInt8(at) ^ 0x01, at)
  return copy
}

/** Decrypting `file` fails for `reason`; nothing is left in its folder but what was there. */
async function expectRefused(file: string, reason: DecryptionFailure, message: RegExp, secret = passphrase) {
  const dir = path.dirname(file)
  const before = readdirSync(dir).sort()
  const target = path.join(dir, 'decrypted.zip')
  const error = await decryptBackupArchive(file, target, secret).then(
    () => undefined,
    (err: unknown) => err,
  )
  expect(error).toBeInstanceOf(BackupDecryptionError)
  expect((error as BackupDecryptionError).reason).toBe(reason)
  expect((error as Error).message).toMatch(message)
  expect(readdirSync(dir).sort()).toEqual(before)
}

describe('backup encryption', () => {
  it('round-trips archives of every shape: several chunks, an exact multiple, one short chunk, nothing', async () => {
    for (const bytes of [4 * chunkBytes + 1000, 3 * chunkBytes, 10, 0]) {
      const { dir, plain, file } = await encrypted(bytes)
      const target = path.join(dir, 'decrypted.zip')
      const header = await decryptBackupArchive(file, target, passphrase)
      expect(readFileSync(target).equals(plain), `${bytes} bytes`).toBe(true)
      expect(header.plaintextBytes).toBe(bytes)
    }
  })

  it('writes a ZIP of two stored entries: a header that says how, never what, and the ciphertext', async () => {
    const { plain, file, written } = await encrypted()
    const { header, payload, methods } = await entriesOf(file)
    expect(methods).toEqual([0, 0])
    const fields = JSON.parse(header.toString('utf8')) as EncryptionHeader
    expect(Object.keys(fields).sort()).toEqual([
      'chunkBytes',
      'cipher',
      'formatVersion',
      'kdf',
      'keyCheck',
      'noncePrefix',
      'plaintextBytes',
    ])
    expect(fields).toMatchObject({
      formatVersion: 1,
      cipher: 'AES-256-GCM',
      kdf: { name: 'scrypt', N: 2 ** 12, r: 8, p: 1 },
      chunkBytes,
      plaintextBytes: plain.length,
    })
    // Five chunks, each with its 16-byte tag; none of the plaintext shows through.
    expect(payload.length).toBe(plain.length + 5 * 16)
    expect(payload.includes(plain.subarray(1000, 1064))).toBe(false)
    expect(readFileSync(file).length).toBe(written.size)
    expect(await isEncryptedBackup(file)).toBe(true)
    expect(await isEncryptedBackup(path.join(path.dirname(file), 'plain.bin'))).toBe(false)
  })

  it.skipIf(!unzip.available)('is a ZIP that unzip reads', async () => {
    const { file } = await encrypted()
    const test = spawnSync('unzip', ['-t', file], { encoding: 'utf8' })
    expect(test.stdout).toContain('No errors detected')
  })

  it('derives the key with the default scrypt parameters in well under a second, each archive with its own salt', async () => {
    const started = performance.now()
    const first = await encrypted(1000, { chunkBytes, scrypt: defaultScrypt })
    expect(performance.now() - started).toBeLessThan(2000)
    const second = await encrypted(1000, { chunkBytes, scrypt: defaultScrypt })
    const headers = await Promise.all(
      [first, second].map(
        async ({ file }) => JSON.parse((await entriesOf(file)).header.toString()) as EncryptionHeader,
      ),
    )
    expect(headers[0]?.kdf).toMatchObject({ N: 2 ** 16, r: 8, p: 1 })
    expect(headers[0]?.kdf.salt).not.toBe(headers[1]?.kdf.salt)
    expect(headers[0]?.noncePrefix).not.toBe(headers[1]?.noncePrefix)
  })

  it('asks for a passphrase when none is given, and refuses a wrong one before reading any chunk', async () => {
    const { file } = await encrypted()
    const dir = path.dirname(file)
    await expect(decryptBackupArchive(file, path.join(dir, 'out.zip'), undefined)).rejects.toMatchObject({
      reason: 'passphrase-needed',
      code: 'CONFLICT',
    })
    await expectRefused(file, 'wrong-passphrase', /does not open this backup/, 'correct horse battery stapler')
    // The same letters composed differently are the same passphrase.
    const accented = 'caf\u00e9 au lait, please'
    const plainFile = path.join(dir, 'plain.bin')
    await encryptBackupArchive(plainFile, path.join(dir, 'accented.zip'), accented, fast)
    await decryptBackupArchive(
      path.join(dir, 'accented.zip'),
      path.join(dir, 'accented.out'),
      accented.normalize('NFD'),
    )
    expect(readFileSync(path.join(dir, 'accented.out')).equals(readFileSync(plainFile))).toBe(true)
  })

  it('refuses a byte flipped in a middle chunk, in a tag, or in the header', async () => {
    const middle = await encrypted()
    await changeEntries(middle.file, ({ payload }) => ({ payload: flip(payload, 2 * sealedChunk + 500) }))
    await expectRefused(middle.file, 'damaged', /chunk 3 of 5 does not authenticate/)

    const tag = await encrypted()
    await changeEntries(tag.file, ({ payload }) => ({ payload: flip(payload, sealedChunk - 1) }))
    await expectRefused(tag.file, 'damaged', /chunk 1 of 5 does not authenticate/)

    const lastTag = await encrypted()
    await changeEntries(lastTag.file, ({ payload }) => ({ payload: flip(payload, payload.length - 1) }))
    await expectRefused(lastTag.file, 'damaged', /chunk 5 of 5 does not authenticate/)

    // A header still valid but changed (the nonce prefix): every chunk's associated data no longer match.
    const header = await encrypted()
    await changeEntries(header.file, ({ header }) => {
      const fields = JSON.parse(header.toString('utf8')) as EncryptionHeader
      const prefix = Buffer.from(fields.noncePrefix, 'base64url')
      return { header: Buffer.from(JSON.stringify({ ...fields, noncePrefix: flip(prefix, 0).toString('base64url') })) }
    })
    await expectRefused(header.file, 'damaged', /chunk 1 of 5 does not authenticate/)

    // The same fields written differently (no indentation): the header's bytes are what is bound.
    const spacing = await encrypted()
    await changeEntries(spacing.file, ({ header }) => ({
      header: Buffer.from(JSON.stringify(JSON.parse(header.toString('utf8')))),
    }))
    await expectRefused(spacing.file, 'damaged', /chunk 1 of 5 does not authenticate/)

    const raw = await encrypted()
    await changeEntries(raw.file, ({ header }) => ({ header: flip(header, 0) }))
    await expectRefused(raw.file, 'damaged', /encryption\.json is not valid JSON/)

    // The byte flipped in the archive file itself, inside the header entry's data.
    const inFile = await encrypted()
    const bytes = readFileSync(inFile.file)
    const at = bytes.indexOf('"plaintextBytes"')
    writeFileSync(inFile.file, flip(bytes, at + 20))
    await expectRefused(inFile.file, 'damaged', /damaged or was tampered with/)
  })

  it('refuses a payload cut at a chunk boundary or inside a chunk, and one with a chunk added', async () => {
    const boundary = await encrypted()
    await changeEntries(boundary.file, ({ payload }) => ({ payload: payload.subarray(0, 4 * sealedChunk) }))
    await expectRefused(boundary.file, 'truncated', /ends after 4 of its 5 chunks/)

    const inside = await encrypted()
    await changeEntries(inside.file, ({ payload }) => ({ payload: payload.subarray(0, 2 * sealedChunk + 100) }))
    await expectRefused(inside.file, 'truncated', /ends after 2 of its 5 chunks/)

    const exact = await encrypted(3 * chunkBytes)
    await changeEntries(exact.file, ({ payload }) => ({ payload: payload.subarray(0, 2 * sealedChunk) }))
    await expectRefused(exact.file, 'truncated', /ends after 2 of its 3 chunks/)

    const longer = await encrypted()
    await changeEntries(longer.file, ({ payload }) => ({
      payload: Buffer.concat([payload, payload.subarray(0, sealedChunk)]),
    }))
    await expectRefused(longer.file, 'damaged', /data after its last chunk/)

    // The archive file itself cut short: its central directory is gone.
    const file = await encrypted()
    const bytes = readFileSync(file.file)
    writeFileSync(file.file, bytes.subarray(0, 3 * sealedChunk))
    await expectRefused(file.file, 'damaged', /not a readable ZIP archive/)
  })

  it('refuses chunks in another order', async () => {
    const { file } = await encrypted()
    await changeEntries(file, ({ payload }) => {
      const chunk = (index: number) => payload.subarray(index * sealedChunk, (index + 1) * sealedChunk)
      return { payload: Buffer.concat([chunk(0), chunk(2), chunk(1), payload.subarray(3 * sealedChunk)]) }
    })
    await expectRefused(file, 'damaged', /chunk 2 of 5 does not authenticate/)
  })

  it('refuses a header that would make the relay spend minutes or gigabytes, without trying', async () => {
    const { file } = await encrypted()
    await changeEntries(file, ({ header }) => {
      const fields = JSON.parse(header.toString('utf8')) as EncryptionHeader
      return { header: Buffer.from(JSON.stringify({ ...fields, kdf: { ...fields.kdf, N: 2 ** 20, r: 32 } })) }
    })
    const started = performance.now()
    await expectRefused(file, 'damaged', /key derivation parameters are out of range/)
    expect(performance.now() - started).toBeLessThan(1000)
  })

  it('refuses an archive with other entries, or of a newer format', async () => {
    const extra = await encrypted()
    const { header, payload } = await entriesOf(extra.file)
    const handle = await open(extra.file, 'w')
    const zip = createZipWriter(handle, { level: 1, concurrency: 1, chunkBytes: sealedChunk })
    for (const [name, data] of [
      [encryptionHeaderEntry, header],
      [encryptedPayloadEntry, payload],
      ['relay.db', Buffer.from('plain')],
    ] as const) {
      await zip.addEntry(name, bufferSource(data), { mtime: new Date(), expectedSize: data.length, store: true })
    }
    await zip.finish()
    await handle.close()
    await expectRefused(extra.file, 'damaged', /holds backup\.zip\.enc, encryption\.json, relay\.db/)

    const newer = await encrypted()
    await changeEntries(newer.file, ({ header }) => {
      const fields = JSON.parse(header.toString('utf8')) as EncryptionHeader
      return { header: Buffer.from(JSON.stringify({ ...fields, formatVersion: 2 })) }
    })
    await expectRefused(newer.file, 'damaged', /format this relay does not know/)
  })
})
