import { createHash } from 'node:crypto'
import { type FileHandle, open } from 'node:fs/promises'
import zlib from 'node:zlib'

export type ZipWriterOptions = {
  /** zlib level, 1–9. */
  level: number
  /** Chunks deflated at the same time on libuv's thread pool. */
  concurrency: number
  /** Bytes read and deflated as one piece. */
  chunkBytes: number
  /** Writes ZIP64 records for every entry and the end of the archive, as an archive over 4 GiB gets. */
  forceZip64?: boolean
  signal?: AbortSignal
}

export type ZipEntryOptions = {
  mtime: Date
  /** Unix permission bits stored with the entry. */
  mode?: number
  /** The size the source will have; ZIP64 sizes are written when it may not fit in 32 bits. */
  expectedSize: number
  /** Called with the length of each chunk read from the source. */
  onChunk?: (bytes: number) => void
  /** Stored as read (method 0), not deflated: for data that cannot shrink, such as ciphertext. */
  store?: boolean
}

export type ZipEntryResult = { name: string; size: number; compressedSize: number; sha256: string }

/** Where an entry's bytes come from: each call fills `buffer` from its start and returns the bytes read, 0 at the end. */
export type ChunkSource = { read(buffer: Buffer): Promise<number> }

export type ZipWriter = {
  /** Streams `source` into the archive as one deflated entry. Entries are added one at a time. */
  addEntry(name: string, source: ChunkSource, options: ZipEntryOptions): Promise<ZipEntryResult>
  /** Writes the central directory; returns the archive's size and SHA-256 (hex). */
  finish(): Promise<{ size: number; sha256: string }>
}

type CentralRecord = {
  name: Buffer
  method: number
  zip64: boolean
  crc32: number
  size: number
  compressedSize: number
  offset: number
  dosTime: number
  dosDate: number
  unixTime: number
  mode: number
}

const max32 = 0xffffffff
// Below this, neither size of an entry can reach 4 GiB: deflate adds well under 1 % to data it cannot shrink.
const zip64Threshold = 0xf0000000
const outputBytes = 512 * 1024
/** A final, empty fixed-Huffman block: ends a deflate stream whose blocks were all sync-flushed. */
const finalBlock = Buffer.from([0x03, 0x00])
const flags = 0x0808 // bit 3: sizes and CRC in a data descriptor; bit 11: UTF-8 names
const methodStore = 0
const methodDeflate = 8
const madeByUnix = 3 << 8
const regularFile = 0o100000

/**
 * A ZIP writer that deflates each entry in parallel: the source's chunks are deflated independently on
 * the thread pool by `concurrency` reused zlib streams, each chunk ended with a sync flush, so their
 * outputs concatenate, in order, into one deflate stream. Unlike pigz, a chunk is not primed with the
 * 32 KiB before it (Node's zlib takes a dictionary only when a stream is made): at 2 MiB chunks that
 * costs 0.5 % in size. CRC-32, SHA-256 and sizes are computed as the chunks pass. Chunks are read into
 * `concurrency + 1` buffers allocated once and reused, so memory stays flat however large the entry.
 */
export function createZipWriter(handle: FileHandle, options: ZipWriterOptions): ZipWriter {
  const { level, concurrency, chunkBytes, forceZip64 = false, signal } = options
  // A buffer is read into again only once the chunk it held was deflated and written: at most
  // `concurrency - 1` jobs are in flight while the next chunk is read.
  const buffers = Array.from({ length: concurrency + 1 }, () => Buffer.allocUnsafeSlow(chunkBytes))
  let lanes: DeflateLane[] = []
  const closeLanes = () => {
    for (const lane of lanes.splice(0)) {
      lane.close()
    }
  }
  const archiveHash = createHash('sha256')
  const central: CentralRecord[] = []
  let offset = 0
  let busy = false

  async function write(buffer: Buffer): Promise<void> {
    archiveHash.update(buffer)
    let written = 0
    while (written < buffer.length) {
      const { bytesWritten } = await handle.write(buffer, written, buffer.length - written, offset + written)
      written += bytesWritten
    }
    offset += buffer.length
  }

  async function addEntry(
    name: string,
    source: ChunkSource,
    { mtime, mode = 0o644, expectedSize, onChunk, store = false }: ZipEntryOptions,
  ): Promise<ZipEntryResult> {
    if (busy) {
      throw new Error('ZIP entries are added one at a time')
    }
    busy = true
    try {
      const nameBytes = Buffer.from(name, 'utf8')
      const zip64 = forceZip64 || expectedSize >= zip64Threshold
      const { dosTime, dosDate } = dosDateTime(mtime)
      const unixTime = Math.max(0, Math.min(max32, Math.floor(mtime.getTime() / 1000)))
      const headerOffset = offset
      const method = store ? methodStore : methodDeflate
      await write(localHeader(nameBytes, method, zip64, dosTime, dosDate, unixTime))

      const contentHash = createHash('sha256')
      let crc32 = 0
      let size = 0
      let compressedSize = 0
      const inFlight: Promise<Buffer>[] = []
      const writeOldest = async () => {
        const deflated = await (inFlight.shift() as Promise<Buffer>)
        await write(deflated)
        compressedSize += deflated.length
      }
      try {
        for (let index = 0; ; index++) {
          const buffer = buffers[index % buffers.length] as Buffer
          const bytes = await source.read(buffer)
          if (bytes === 0) {
            break
          }
          signal?.throwIfAborted()
          const chunk = buffer.subarray(0, bytes)
          contentHash.update(chunk)
          crc32 = zlib.crc32(chunk, crc32)
          size += bytes
          onChunk?.(bytes)
          if (store) {
            await write(chunk)
            compressedSize += bytes
            continue
          }
          if (lanes.length === 0) {
            lanes = Array.from({ length: concurrency }, () => createDeflateLane(level))
          }
          // A lane is given a chunk again only once its last one was written: at most `concurrency` are in flight.
          const job = (lanes[index % lanes.length] as DeflateLane).deflate(chunk)
          job.catch(() => {})
          inFlight.push(job)
          while (inFlight.length >= concurrency) {
            await writeOldest()
          }
        }
        while (inFlight.length > 0) {
          await writeOldest()
        }
      } catch (err) {
        // Whatever went wrong, no deflate job still reads a buffer once this returns.
        await Promise.allSettled(inFlight)
        closeLanes()
        throw err
      }
      if (!store) {
        await write(finalBlock)
        compressedSize += finalBlock.length
      }
      if (!zip64 && (size > max32 || compressedSize > max32)) {
        throw new Error(`${name} grew past 4 GiB while it was read`)
      }
      await write(dataDescriptor(zip64, crc32, size, compressedSize))
      central.push({
        name: nameBytes,
        method,
        zip64,
        crc32,
        size,
        compressedSize,
        offset: headerOffset,
        dosTime,
        dosDate,
        unixTime,
        mode,
      })
      return { name, size, compressedSize, sha256: contentHash.digest('hex') }
    } finally {
      busy = false
    }
  }

  async function finish(): Promise<{ size: number; sha256: string }> {
    closeLanes()
    const directoryOffset = offset
    for (const record of central) {
      await write(centralHeader(record, forceZip64))
    }
    const directorySize = offset - directoryOffset
    const needsZip64 = forceZip64 || central.length >= 0xffff || directoryOffset >= max32 || directorySize >= max32
    if (needsZip64) {
      const recordOffset = offset
      await write(zip64EndRecord(central.length, directorySize, directoryOffset))
      await write(zip64Locator(recordOffset))
    }
    await write(endRecord(needsZip64, central.length, directorySize, directoryOffset))
    return { size: offset, sha256: archiveHash.digest('hex') }
  }

  return { addEntry, finish }
}

type DeflateLane = { deflate(chunk: Buffer): Promise<Buffer>; close(): void }

/**
 * One zlib stream deflating chunk after chunk, reset before each so every chunk's output stands alone,
 * and ended with a sync flush: on a byte boundary with no final block, so the next chunk's output can
 * follow it directly. Kept for the whole archive: a stream per chunk would allocate zlib's state and an
 * output buffer each time, and that churn of memory outside the JavaScript heap sets off full garbage
 * collections that stall a busy server's event loop.
 */
function createDeflateLane(level: number): DeflateLane {
  // With zlib's default 16 KiB output buffer every chunk would bounce between the pool and the event
  // loop dozens of times; 512 KiB holds a typical 2 MiB chunk's output in one go.
  const stream = zlib.createDeflateRaw({ level, chunkSize: outputBytes })
  let parts: Buffer[] = []
  let failed: ((err: Error) => void) | undefined
  stream.on('data', (part: Buffer) => parts.push(part))
  stream.on('error', (err) => failed?.(err))
  return {
    deflate(chunk) {
      return new Promise((resolve, reject) => {
        failed = reject
        stream.reset()
        stream.write(chunk)
        stream.flush(zlib.constants.Z_SYNC_FLUSH, () => {
          const output = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts)
          parts = []
          failed = undefined
          resolve(output)
        })
      })
    },
    close: () => stream.close(),
  }
}

/** The first `size` bytes of a file: a file that grows while it is read adds nothing past its listed size. */
export async function openFileSource(file: string, size: number): Promise<ChunkSource & { close(): Promise<void> }> {
  const handle = await open(file, 'r')
  let position = 0
  return {
    async read(buffer) {
      let filled = 0
      while (filled < buffer.length && position < size) {
        const wanted = Math.min(buffer.length - filled, size - position)
        const { bytesRead } = await handle.read(buffer, filled, wanted, position)
        if (bytesRead === 0) {
          break
        }
        filled += bytesRead
        position += bytesRead
      }
      return filled
    },
    close: () => handle.close(),
  }
}

/** `data` as a source, copied out a buffer at a time. */
export function bufferSource(data: Buffer): ChunkSource {
  let position = 0
  return {
    async read(buffer) {
      const bytes = data.copy(buffer, 0, position)
      position += bytes
      return bytes
    },
  }
}

function localHeader(
  name: Buffer,
  method: number,
  zip64: boolean,
  dosTime: number,
  dosDate: number,
  unixTime: number,
): Buffer {
  const zip64Extra = zip64 ? extraField(0x0001, [u64(0), u64(0)]) : Buffer.alloc(0)
  const extra = Buffer.concat([zip64Extra, timestampExtra(unixTime)])
  const header = Buffer.alloc(30)
  header.writeUInt32LE(0x04034b50, 0)
  header.writeUInt16LE(zip64 ? 45 : 20, 4)
  header.writeUInt16LE(flags, 6)
  header.writeUInt16LE(method, 8)
  header.writeUInt16LE(dosTime, 10)
  header.writeUInt16LE(dosDate, 12)
  // CRC-32 and sizes follow the data, in the data descriptor.
  header.writeUInt32LE(0, 14)
  header.writeUInt32LE(zip64 ? max32 : 0, 18)
  header.writeUInt32LE(zip64 ? max32 : 0, 22)
  header.writeUInt16LE(name.length, 26)
  header.writeUInt16LE(extra.length, 28)
  return Buffer.concat([header, name, extra])
}

function dataDescriptor(zip64: boolean, crc32: number, size: number, compressedSize: number): Buffer {
  const descriptor = Buffer.alloc(zip64 ? 24 : 16)
  descriptor.writeUInt32LE(0x08074b50, 0)
  descriptor.writeUInt32LE(crc32, 4)
  if (zip64) {
    descriptor.writeBigUInt64LE(BigInt(compressedSize), 8)
    descriptor.writeBigUInt64LE(BigInt(size), 16)
  } else {
    descriptor.writeUInt32LE(compressedSize, 8)
    descriptor.writeUInt32LE(size, 12)
  }
  return descriptor
}

function centralHeader(record: CentralRecord, forceZip64: boolean): Buffer {
  // APPNOTE 4.5.3: the ZIP64 extra field holds, in this order, only the values whose 32-bit field is 0xFFFFFFFF.
  const sizesIn64 = record.zip64 || record.size >= max32 || record.compressedSize >= max32
  const offsetIn64 = forceZip64 || record.offset >= max32
  const values: Buffer[] = []
  if (sizesIn64) {
    values.push(u64(record.size), u64(record.compressedSize))
  }
  if (offsetIn64) {
    values.push(u64(record.offset))
  }
  const zip64Extra = values.length > 0 ? extraField(0x0001, values) : Buffer.alloc(0)
  const extra = Buffer.concat([zip64Extra, timestampExtra(record.unixTime)])
  const version = values.length > 0 ? 45 : 20
  const header = Buffer.alloc(46)
  header.writeUInt32LE(0x02014b50, 0)
  header.writeUInt16LE(madeByUnix | version, 4)
  header.writeUInt16LE(version, 6)
  header.writeUInt16LE(flags, 8)
  header.writeUInt16LE(record.method, 10)
  header.writeUInt16LE(record.dosTime, 12)
  header.writeUInt16LE(record.dosDate, 14)
  header.writeUInt32LE(record.crc32, 16)
  header.writeUInt32LE(sizesIn64 ? max32 : record.compressedSize, 20)
  header.writeUInt32LE(sizesIn64 ? max32 : record.size, 24)
  header.writeUInt16LE(record.name.length, 28)
  header.writeUInt16LE(extra.length, 30)
  header.writeUInt16LE(0, 32) // comment length
  header.writeUInt16LE(0, 34) // disk number start
  header.writeUInt16LE(0, 36) // internal attributes
  header.writeUInt32LE(((regularFile | (record.mode & 0o777)) << 16) >>> 0, 38)
  header.writeUInt32LE(offsetIn64 ? max32 : record.offset, 42)
  return Buffer.concat([header, record.name, extra])
}

function zip64EndRecord(entries: number, directorySize: number, directoryOffset: number): Buffer {
  const record = Buffer.alloc(56)
  record.writeUInt32LE(0x06064b50, 0)
  record.writeBigUInt64LE(44n, 4) // size of the rest of this record
  record.writeUInt16LE(madeByUnix | 45, 12)
  record.writeUInt16LE(45, 14)
  record.writeUInt32LE(0, 16) // this disk
  record.writeUInt32LE(0, 20) // disk where the central directory starts
  record.writeBigUInt64LE(BigInt(entries), 24)
  record.writeBigUInt64LE(BigInt(entries), 32)
  record.writeBigUInt64LE(BigInt(directorySize), 40)
  record.writeBigUInt64LE(BigInt(directoryOffset), 48)
  return record
}

function zip64Locator(recordOffset: number): Buffer {
  const locator = Buffer.alloc(20)
  locator.writeUInt32LE(0x07064b50, 0)
  locator.writeUInt32LE(0, 4)
  locator.writeBigUInt64LE(BigInt(recordOffset), 8)
  locator.writeUInt32LE(1, 16) // total number of disks
  return locator
}

function endRecord(zip64: boolean, entries: number, directorySize: number, directoryOffset: number): Buffer {
  const record = Buffer.alloc(22)
  record.writeUInt32LE(0x06054b50, 0)
  record.writeUInt16LE(zip64 ? 0xffff : entries, 8)
  record.writeUInt16LE(zip64 ? 0xffff : entries, 10)
  record.writeUInt32LE(zip64 ? max32 : directorySize, 12)
  record.writeUInt32LE(zip64 ? max32 : directoryOffset, 16)
  return record
}

function extraField(id: number, values: Buffer[]): Buffer {
  const data = Buffer.concat(values)
  const head = Buffer.alloc(4)
  head.writeUInt16LE(id, 0)
  head.writeUInt16LE(data.length, 2)
  return Buffer.concat([head, data])
}

/** Info-ZIP's extended timestamp (0x5455): the modification time in UTC seconds, beside the DOS local time. */
function timestampExtra(unixTime: number): Buffer {
  const data = Buffer.alloc(5)
  data.writeUInt8(1, 0)
  data.writeUInt32LE(unixTime, 1)
  return extraField(0x5455, [data])
}

function u64(value: number): Buffer {
  const buffer = Buffer.alloc(8)
  buffer.writeBigUInt64LE(BigInt(value))
  return buffer
}

/** MS-DOS date and time fields, in local time as unzip reads them; 1980 at the earliest. */
function dosDateTime(date: Date): { dosTime: number; dosDate: number } {
  const year = date.getFullYear()
  if (year < 1980) {
    return { dosTime: 0, dosDate: (1 << 5) | 1 }
  }
  const dosDate = ((Math.min(year, 2107) - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate()
  const dosTime = (date.getHours() << 11) | (date.getMinutes() << 5) | Math.floor(date.getSeconds() / 2)
  return { dosTime, dosDate }
}
