import { createHash, randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { S3Error } from './s3-error.js'

export type DiskObject = { size: number; sha256: string | undefined; modified: Date }

/** Inclusive byte offsets, as in HTTP's Content-Range. */
export type ByteRange = { start: number; end: number }

/** Beside each object: its key (for whoever looks at the folder), size, SHA-256 and the inode it describes. */
type Sidecar = { key: string; size: number; sha256: string; ino: number }

/**
 * Objects in one folder. A file is named by the SHA-256 of its key, so no key, however crafted, names a
 * path outside the folder, and keys `a` and `a/b` cannot collide as file and directory.
 */
export function createDiskObjects(dir: string) {
  function fileFor(key: string): string {
    const name = createHash('sha256').update(key).digest('hex')
    return path.join(dir, name.slice(0, 2), name)
  }

  // The sidecar counts only for the inode it was written for: a crash or a concurrent PUT between
  // the two renames leaves an object whose checksum reads as unknown, never as another object's.
  async function sidecarSha256(file: string, ino: number): Promise<string | undefined> {
    try {
      const sidecar = JSON.parse(await readFile(`${file}.json`, 'utf8')) as Partial<Sidecar>
      return sidecar.ino === ino && typeof sidecar.sha256 === 'string' ? sidecar.sha256 : undefined
    } catch (err) {
      if (isMissing(err) || err instanceof SyntaxError) {
        return undefined
      }
      throw err
    }
  }

  return {
    /**
     * Streams `body` to a temporary file beside the object, counting and hashing as it goes, and moves it
     * into place only when it is exactly `size` bytes and matches `sha256` (hex) when one is pinned.
     * Returns the SHA-256 (hex) of what was stored.
     */
    async write(key: string, body: Readable, { size, sha256 }: { size: number; sha256?: string }): Promise<string> {
      const file = fileFor(key)
      await mkdir(path.dirname(file), { recursive: true })
      const temp = `${file}.${randomUUID()}.tmp`
      const hash = createHash('sha256')
      let received = 0
      try {
        await pipeline(
          body,
          async function* (chunks: AsyncIterable<Buffer>) {
            for await (const chunk of chunks) {
              received += chunk.length
              if (received > size) {
                throw new S3Error(400, 'IncompleteBody', 'The body is longer than the Content-Length')
              }
              hash.update(chunk)
              yield chunk
            }
          },
          createWriteStream(temp, { flags: 'wx', mode: 0o600, flush: true }),
        )
        if (received !== size) {
          throw new S3Error(
            400,
            'IncompleteBody',
            'You did not provide the number of bytes specified by the Content-Length HTTP header',
          )
        }
        const digest = hash.digest('hex')
        if (sha256 !== undefined && digest !== sha256) {
          throw new S3Error(400, 'BadDigest', 'The SHA256 you specified did not match the calculated checksum')
        }
        await rename(temp, file)
        const { ino } = await stat(file)
        const sidecar: Sidecar = { key, size, sha256: digest, ino }
        await writeFile(`${temp}.json`, JSON.stringify(sidecar), { mode: 0o600 })
        await rename(`${temp}.json`, `${file}.json`)
        return digest
      } catch (err) {
        await Promise.all([rm(temp, { force: true }), rm(`${temp}.json`, { force: true })])
        throw err
      }
    },

    /**
     * The object and a stream of its bytes, read from one open file even if it is replaced meanwhile.
     * `range` picks the inclusive byte span to stream once the size is known (it may throw to refuse).
     */
    async read(
      key: string,
      range?: (size: number) => ByteRange | undefined,
    ): Promise<(DiskObject & { body: Readable; range: ByteRange | undefined }) | undefined> {
      const file = fileFor(key)
      const handle = await open(file, 'r').catch((err: unknown) => {
        if (isMissing(err)) {
          return undefined
        }
        throw err
      })
      if (!handle) {
        return undefined
      }
      try {
        const info = await handle.stat()
        const sha256 = await sidecarSha256(file, info.ino)
        const span = range?.(info.size)
        const body = handle.createReadStream(span && { start: span.start, end: span.end })
        return { size: info.size, sha256, modified: info.mtime, body, range: span }
      } catch (err) {
        await handle.close()
        throw err
      }
    },

    /** The object without its bytes; `range` as for `read`. */
    async stat(
      key: string,
      range?: (size: number) => ByteRange | undefined,
    ): Promise<(DiskObject & { range: ByteRange | undefined }) | undefined> {
      const file = fileFor(key)
      const info = await stat(file).catch((err: unknown) => {
        if (isMissing(err)) {
          return undefined
        }
        throw err
      })
      if (!info) {
        return undefined
      }
      const sha256 = await sidecarSha256(file, info.ino)
      return { size: info.size, sha256, modified: info.mtime, range: range?.(info.size) }
    },

    /** Removes the object; a missing one is not an error. */
    async remove(key: string): Promise<void> {
      const file = fileFor(key)
      await rm(file, { force: true })
      await rm(`${file}.json`, { force: true })
    },
  }
}

export type DiskObjects = ReturnType<typeof createDiskObjects>

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT'
}
