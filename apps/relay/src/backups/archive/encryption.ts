import { createCipheriv, createDecipheriv, createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { type FileHandle, open, rename, rm, stat } from 'node:fs/promises'
import { Transform, type TransformCallback } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { AppError, encryptedBackupName } from '@relay/contracts'
import { type Static, Type } from 'typebox'
import { Value } from 'typebox/value'
import yauzl, { type Entry, type ZipFile } from 'yauzl'
import type { BackupArchive } from './create-archive.js'
import { listEntries } from './read-archive.js'
import { bufferSource, type ChunkSource, createZipWriter, openFileSource } from './zip-writer.js'

/** The plaintext entry that says how the payload is encrypted. */
export const encryptionHeaderEntry = 'encryption.json'
/** The entry holding the whole plain backup archive, encrypted. */
export const encryptedPayloadEntry = 'backup.zip.enc'

const formatVersion = 1
const tagBytes = 16
const keyBytes = 32
const keyCheckBytes = 16
const noncePrefixBytes = 8
const saltBytes = 16
const maxHeaderBytes = 4096

export type ScryptParameters = { N: number; r: number; p: number }

/**
 * Measured on this project's 2-core machines: N = 2^16, r = 8 takes about 170 ms and 64 MiB
 * (2^15: 90 ms, 2^17: 340 ms). Stored in each header, so they can grow without breaking old backups.
 */
export const defaultScrypt: ScryptParameters = { N: 2 ** 16, r: 8, p: 1 }

/** age's 64 KiB would do; 256 KiB keeps a 50 MB backup to 200 authentication tags at no memory cost worth naming. */
export const defaultChunkBytes = 256 * 1024

/** What a header may ask of the reader: a tampered one must not make the relay spend a minute or a gigabyte. */
const chunkBytesRange = { min: 64 * 1024, max: 1024 * 1024 }
const maxScryptMemory = 256 * 1024 * 1024
const maxScryptWork = 2 ** 23

const Base64 = (bytes: number) =>
  Type.String({ pattern: `^[A-Za-z0-9_-]{${Math.ceil((bytes * 4) / 3)}}$`, maxLength: Math.ceil((bytes * 4) / 3) })

/**
 * `encryption.json`: how the payload was encrypted, nothing about what it holds. Its exact bytes are
 * bound into every chunk's associated data, so no field can be changed without the payload failing.
 * `keyCheck` (16 bytes derived beside the key) tells a wrong passphrase from a tampered payload.
 */
export const EncryptionHeader = Type.Object(
  {
    formatVersion: Type.Literal(formatVersion),
    cipher: Type.Literal('AES-256-GCM'),
    kdf: Type.Object(
      {
        name: Type.Literal('scrypt'),
        N: Type.Integer({ minimum: 2 ** 10, maximum: 2 ** 20 }),
        r: Type.Integer({ minimum: 1, maximum: 32 }),
        p: Type.Integer({ minimum: 1, maximum: 16 }),
        salt: Base64(saltBytes),
      },
      { additionalProperties: false },
    ),
    chunkBytes: Type.Integer({ minimum: chunkBytesRange.min, maximum: chunkBytesRange.max }),
    plaintextBytes: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    noncePrefix: Base64(noncePrefixBytes),
    keyCheck: Base64(keyCheckBytes),
  },
  { additionalProperties: false },
)
export type EncryptionHeader = Static<typeof EncryptionHeader>

export type DecryptionFailure = 'passphrase-needed' | 'wrong-passphrase' | 'damaged' | 'truncated'

/** Why an encrypted backup could not be opened; `reason` for code, the message for people. */
export class BackupDecryptionError extends AppError {
  readonly reason: DecryptionFailure

  constructor(reason: DecryptionFailure, message: string, options?: ErrorOptions) {
    super(reason === 'wrong-passphrase' ? 'FORBIDDEN' : 'CONFLICT', message, options)
    this.reason = reason
  }
}

const failures = {
  needed: () =>
    new BackupDecryptionError(
      'passphrase-needed',
      'This backup is encrypted and needs its passphrase: enter the passphrase it was made with',
    ),
  wrong: () =>
    new BackupDecryptionError(
      'wrong-passphrase',
      'The passphrase does not open this backup: it was encrypted with a different passphrase',
    ),
  damaged: (detail: string, cause?: unknown) =>
    new BackupDecryptionError('damaged', `The encrypted backup is damaged or was tampered with: ${detail}`, { cause }),
  truncated: (detail: string) => new BackupDecryptionError('truncated', `The encrypted backup is truncated: ${detail}`),
}

export type EncryptOptions = {
  chunkBytes?: number
  scrypt?: ScryptParameters
}

/**
 * Encrypts the backup archive `plainFile` into `targetFile`, itself a ZIP of two stored entries: the
 * header, and the archive as a stream of AES-256-GCM chunks (as age and restic do). Each chunk's nonce is
 * a random prefix and its counter; its associated data are the header's hash, the counter and whether
 * it is the last, so a chunk changed, moved, dropped or added fails. Streams a chunk at a time. On
 * failure nothing is left at `targetFile`.
 */
export async function encryptBackupArchive(
  plainFile: string,
  targetFile: string,
  passphrase: string,
  options: EncryptOptions = {},
): Promise<{ size: number; sha256: string }> {
  const chunkBytes = options.chunkBytes ?? defaultChunkBytes
  const { N, r, p } = options.scrypt ?? defaultScrypt
  const plaintextBytes = (await stat(plainFile)).size
  const salt = randomBytes(saltBytes)
  const keys = await deriveKeys(passphrase, { N, r, p }, salt)
  const header: EncryptionHeader = {
    formatVersion,
    cipher: 'AES-256-GCM',
    kdf: { name: 'scrypt', N, r, p, salt: salt.toString('base64url') },
    chunkBytes,
    plaintextBytes,
    noncePrefix: randomBytes(noncePrefixBytes).toString('base64url'),
    keyCheck: keys.check.toString('base64url'),
  }
  const headerBytes = Buffer.from(`${JSON.stringify(header, null, 2)}\n`)
  const layout = chunkLayout(header)
  const partialFile = `${targetFile}.partial`
  const plain = await openFileSource(plainFile, plaintextBytes)
  let handle: FileHandle | undefined
  try {
    handle = await open(partialFile, 'wx', 0o600)
    const zip = createZipWriter(handle, { level: 1, concurrency: 1, chunkBytes: chunkBytes + tagBytes })
    const mtime = new Date()
    await zip.addEntry(encryptionHeaderEntry, bufferSource(headerBytes), {
      mtime,
      mode: 0o600,
      expectedSize: headerBytes.length,
      store: true,
    })
    await zip.addEntry(encryptedPayloadEntry, encryptingSource(plain, keys.chunk, header, headerBytes), {
      mtime,
      mode: 0o600,
      expectedSize: layout.ciphertextBytes,
      store: true,
    })
    const written = await zip.finish()
    await handle.close()
    handle = undefined
    await rename(partialFile, targetFile)
    return written
  } catch (err) {
    await handle?.close().catch(() => {})
    await rm(partialFile, { force: true })
    throw err
  } finally {
    await plain.close()
  }
}

/**
 * The built archive, encrypted beside it under the `.encrypted.zip` name: what is uploaded, and what
 * the cloud's checksum pins. The plain archive is removed once the encrypted one is complete.
 */
export async function encryptBuiltArchive(archive: BackupArchive, passphrase: string): Promise<BackupArchive> {
  const file = archive.file.replace(/\.zip$/, '.encrypted.zip')
  const { size, sha256 } = await encryptBackupArchive(archive.file, file, passphrase)
  await rm(archive.file, { force: true })
  return { ...archive, file, filename: encryptedBackupName(archive.filename), size, sha256 }
}

/** Whether `file` is an encrypted backup: a ZIP with the header entry. Anything else is left to the archive checks. */
export async function isEncryptedBackup(file: string): Promise<boolean> {
  let zip: ZipFile
  try {
    zip = await openZip(file)
  } catch {
    return false
  }
  try {
    return (await listEntries(zip)).some((entry) => entry.fileName === encryptionHeaderEntry)
  } catch {
    return false
  } finally {
    zip.close()
  }
}

/**
 * Decrypts the encrypted backup `file` into `targetFile` (created, never overwritten), checking every
 * chunk as it streams. Throws `BackupDecryptionError`: no passphrase, a wrong one (checked before any
 * chunk is read), a damaged or tampered header or chunk, or a payload that ends early. On failure
 * nothing is left at `targetFile`.
 */
export async function decryptBackupArchive(
  file: string,
  targetFile: string,
  passphrase: string | undefined,
): Promise<EncryptionHeader> {
  if (passphrase === undefined) {
    throw failures.needed()
  }
  let zip: ZipFile
  try {
    zip = await openZip(file)
  } catch (err) {
    throw failures.damaged(`it is not a readable ZIP archive (${messageOf(err)})`, err)
  }
  let created = false
  try {
    const { headerEntry, payloadEntry } = await findEntries(zip)
    const headerBytes = await readHeaderBytes(zip, headerEntry)
    const header = parseHeader(headerBytes)
    const keys = await deriveKeys(passphrase, header.kdf, Buffer.from(header.kdf.salt, 'base64url'))
    if (!timingSafeEqual(keys.check, Buffer.from(header.keyCheck, 'base64url'))) {
      throw failures.wrong()
    }
    const payload = await zip.openReadStreamPromise(payloadEntry)
    const output = await open(targetFile, 'wx', 0o600)
    created = true
    await pipeline(payload, new ChunkDecryptor(keys.chunk, header, headerBytes), output.createWriteStream())
    return header
  } catch (err) {
    if (created) {
      await rm(targetFile, { force: true })
    }
    if (err instanceof BackupDecryptionError || (err instanceof Error && 'syscall' in err)) {
      throw err
    }
    throw failures.damaged(messageOf(err), err)
  } finally {
    zip.close()
  }
}

type ChunkKeys = { chunk: Buffer; check: Buffer }

/** One scrypt run gives both the chunk key and the key check: 48 bytes, split. */
function deriveKeys(passphrase: string, { N, r, p }: ScryptParameters, salt: Buffer): Promise<ChunkKeys> {
  const memory = 128 * N * r
  if (memory > maxScryptMemory || N * r * p > maxScryptWork || (N & (N - 1)) !== 0) {
    return Promise.reject(failures.damaged('its key derivation parameters are out of range'))
  }
  return new Promise((resolve, reject) => {
    // NFC: the same passphrase typed on another system may arrive composed differently.
    scrypt(passphrase.normalize('NFC'), salt, keyBytes + keyCheckBytes, { N, r, p, maxmem: 2 * memory }, (err, key) =>
      err ? reject(err) : resolve({ chunk: key.subarray(0, keyBytes), check: key.subarray(keyBytes) }),
    )
  })
}

/** How the payload divides into chunks: at least one, the last holding what is left (possibly nothing). */
function chunkLayout({ chunkBytes, plaintextBytes }: EncryptionHeader) {
  const count = Math.max(1, Math.ceil(plaintextBytes / chunkBytes))
  const lastBytes = plaintextBytes - (count - 1) * chunkBytes
  return {
    count,
    plainBytesOf: (index: number) => (index === count - 1 ? lastBytes : chunkBytes),
    ciphertextBytes: plaintextBytes + count * tagBytes,
  }
}

function nonceOf(header: EncryptionHeader, index: number): Buffer {
  const nonce = Buffer.alloc(noncePrefixBytes + 4)
  Buffer.from(header.noncePrefix, 'base64url').copy(nonce)
  nonce.writeUInt32BE(index, noncePrefixBytes)
  return nonce
}

function associatedData(headerHash: Buffer, index: number, isLast: boolean): Buffer {
  const data = Buffer.alloc(headerHash.length + 5)
  headerHash.copy(data)
  data.writeUInt32BE(index, headerHash.length)
  data.writeUInt8(isLast ? 1 : 0, headerHash.length + 4)
  return data
}

/** The plain archive as ciphertext: each read returns one whole chunk and its tag. */
function encryptingSource(plain: ChunkSource, key: Buffer, header: EncryptionHeader, headerBytes: Buffer): ChunkSource {
  const layout = chunkLayout(header)
  if (layout.count > 2 ** 32) {
    throw new Error('The backup archive is too large to encrypt')
  }
  const headerHash = createHash('sha256').update(headerBytes).digest()
  const chunk = Buffer.allocUnsafe(header.chunkBytes)
  let index = 0
  return {
    async read(buffer) {
      if (index === layout.count) {
        return 0
      }
      const expected = layout.plainBytesOf(index)
      const bytes = expected === 0 ? 0 : await plain.read(chunk.subarray(0, expected))
      if (bytes !== expected) {
        throw new Error('The backup archive changed while it was encrypted')
      }
      const cipher = createCipheriv('aes-256-gcm', key, nonceOf(header, index), { authTagLength: tagBytes })
      cipher.setAAD(associatedData(headerHash, index, index === layout.count - 1))
      let length = cipher.update(chunk.subarray(0, bytes)).copy(buffer)
      length += cipher.final().copy(buffer, length)
      length += cipher.getAuthTag().copy(buffer, length)
      index++
      return length
    },
  }
}

/** Gathers the payload into whole chunks and passes on each one's plaintext once its tag checks out. */
class ChunkDecryptor extends Transform {
  private readonly key: Buffer
  private readonly header: EncryptionHeader
  private readonly layout: ReturnType<typeof chunkLayout>
  private readonly headerHash: Buffer
  private readonly pending: Buffer
  private filled = 0
  private index = 0

  constructor(key: Buffer, header: EncryptionHeader, headerBytes: Buffer) {
    super()
    this.key = key
    this.header = header
    this.layout = chunkLayout(header)
    this.headerHash = createHash('sha256').update(headerBytes).digest()
    this.pending = Buffer.allocUnsafe(header.chunkBytes + tagBytes)
  }

  override _transform(data: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let position = 0
    while (position < data.length) {
      if (this.index === this.layout.count) {
        callback(failures.damaged('it has data after its last chunk'))
        return
      }
      const wanted = this.layout.plainBytesOf(this.index) + tagBytes
      const taken = data.copy(this.pending, this.filled, position, position + wanted - this.filled)
      this.filled += taken
      position += taken
      if (this.filled === wanted) {
        try {
          this.push(this.open(wanted))
        } catch (err) {
          callback(err as Error)
          return
        }
      }
    }
    callback()
  }

  override _flush(callback: TransformCallback): void {
    if (this.index < this.layout.count) {
      // An empty last chunk still has its tag: a stream cut at a chunk boundary is missing one.
      callback(failures.truncated(`it ends after ${this.index} of its ${this.layout.count} chunks`))
      return
    }
    callback()
  }

  private open(length: number): Buffer {
    const index = this.index
    const isLast = index === this.layout.count - 1
    const tagAt = length - tagBytes
    const decipher = createDecipheriv('aes-256-gcm', this.key, nonceOf(this.header, index), {
      authTagLength: tagBytes,
    })
    decipher.setAAD(associatedData(this.headerHash, index, isLast))
    decipher.setAuthTag(this.pending.subarray(tagAt, length))
    const plain = decipher.update(this.pending.subarray(0, tagAt))
    try {
      decipher.final()
    } catch (err) {
      throw failures.damaged(`chunk ${index + 1} of ${this.layout.count} does not authenticate`, err)
    }
    this.filled = 0
    this.index++
    return plain
  }
}

function openZip(file: string): Promise<ZipFile> {
  return yauzl.openPromise(file, {
    lazyEntries: true,
    autoClose: false,
    decodeStrings: true,
    strictFileNames: true,
    validateEntrySizes: true,
  })
}

/** Exactly the header and the payload, each once, stored or deflated, and not ZIP-encrypted. */
async function findEntries(zip: ZipFile): Promise<{ headerEntry: Entry; payloadEntry: Entry }> {
  const entries = await listEntries(zip)
  const names = entries.map((entry) => entry.fileName).sort()
  const expected = [encryptedPayloadEntry, encryptionHeaderEntry].sort()
  if (names.length !== expected.length || names.some((name, index) => name !== expected[index])) {
    throw failures.damaged(`it holds ${names.join(', ') || 'nothing'} instead of ${expected.join(' and ')}`)
  }
  for (const entry of entries) {
    if (entry.isEncrypted() || (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)) {
      throw failures.damaged(`${entry.fileName} is stored in a way it cannot be read`)
    }
  }
  const byName = (name: string) => entries.find((entry) => entry.fileName === name) as Entry
  return { headerEntry: byName(encryptionHeaderEntry), payloadEntry: byName(encryptedPayloadEntry) }
}

async function readHeaderBytes(zip: ZipFile, entry: Entry): Promise<Buffer> {
  if (entry.uncompressedSize > maxHeaderBytes) {
    throw failures.damaged(`${encryptionHeaderEntry} has ${entry.uncompressedSize} bytes, more than ${maxHeaderBytes}`)
  }
  const chunks: Buffer[] = []
  for await (const chunk of await zip.openReadStreamPromise(entry)) {
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

function parseHeader(bytes: Buffer): EncryptionHeader {
  let value: unknown
  try {
    value = JSON.parse(bytes.toString('utf8'))
  } catch {
    throw failures.damaged(`${encryptionHeaderEntry} is not valid JSON`)
  }
  if (!Value.Check(EncryptionHeader, value)) {
    const first = Value.Errors(EncryptionHeader, value)[0]
    if ((value as { formatVersion?: unknown } | null)?.formatVersion !== formatVersion) {
      throw failures.damaged(`${encryptionHeaderEntry} is of a format this relay does not know; update the relay`)
    }
    throw failures.damaged(`${encryptionHeaderEntry} ${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`)
  }
  return value
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
