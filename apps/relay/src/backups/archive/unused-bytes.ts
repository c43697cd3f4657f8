import { open } from 'node:fs/promises'
import type { ChunkSource } from './zip-writer.js'

// SQLite's file format (sqlite.org/fileformat2.html): what a database file holds that no query can
// reach — free pages, and in each b-tree page the gap between its cell pointers and its cells and the
// bodies of its freeblocks — is what deleted rows left behind. VACUUM INTO leaves it out; a backup that
// reads the pages in place zeroes it instead, so deleted rows do not travel and zeros pack to nothing.

/** The pages on a database's freelist: `leaves` hold nothing in use, `trunks` only the list itself. */
export type FreePages = { leaves: Set<number>; trunks: Map<number, number> }

const headerBytes = 100
/** b-tree page types: interior index, interior table, leaf index, leaf table. */
const interiorPages = new Set([2, 5])
const leafPages = new Set([10, 13])

/** Reads the freelist of the database `file` (page numbers from 1) of `pageCount` pages of `pageSize`. */
export async function readFreePages(file: string, pageSize: number, pageCount: number): Promise<FreePages> {
  const leaves = new Set<number>()
  const trunks = new Map<number, number>()
  const handle = await open(file, 'r')
  try {
    const header = Buffer.alloc(4)
    await handle.read(header, 0, 4, 32)
    let trunk = header.readUInt32BE(0)
    const page = Buffer.alloc(pageSize)
    // A damaged list could loop or point past the end: such a file is packed as it is (its check reports it).
    while (trunk > 1 && trunk <= pageCount && !trunks.has(trunk) && trunks.size + leaves.size < pageCount) {
      await handle.read(page, 0, pageSize, (trunk - 1) * pageSize)
      const count = Math.min(page.readUInt32BE(4), pageSize / 4 - 2)
      trunks.set(trunk, count)
      for (let index = 0; index < count; index++) {
        const leaf = page.readUInt32BE(8 + index * 4)
        if (leaf > 1 && leaf <= pageCount) {
          leaves.add(leaf)
        }
      }
      trunk = page.readUInt32BE(0)
    }
  } finally {
    await handle.close()
  }
  return { leaves, trunks }
}

/**
 * `source`, a database file read from its start in whole pages, with the bytes no query can reach zeroed.
 * A page that does not parse as the format says is passed on untouched.
 */
export function withoutUnusedBytes(source: ChunkSource, pageSize: number, free: FreePages): ChunkSource {
  let pageNumber = 1
  return {
    async read(buffer) {
      const bytes = await source.read(buffer)
      for (let start = 0; start + pageSize <= bytes; start += pageSize, pageNumber++) {
        zeroUnused(buffer.subarray(start, start + pageSize), pageNumber, free)
      }
      if (bytes % pageSize !== 0) {
        throw new Error('a database file is read in whole pages')
      }
      return bytes
    },
  }
}

function zeroUnused(page: Buffer, pageNumber: number, free: FreePages): void {
  if (free.leaves.has(pageNumber)) {
    page.fill(0)
    return
  }
  const listed = free.trunks.get(pageNumber)
  if (listed !== undefined) {
    page.fill(0, 8 + 4 * listed)
    return
  }
  const at = pageNumber === 1 ? headerBytes : 0
  const type = page[at] ?? 0
  if (!interiorPages.has(type) && !leafPages.has(type)) {
    return
  }
  const cells = page.readUInt16BE(at + 3)
  const pointersEnd = at + (interiorPages.has(type) ? 12 : 8) + 2 * cells
  const contentStart = page.readUInt16BE(at + 5) || 65_536
  if (pointersEnd > contentStart || contentStart > page.length) {
    return
  }
  // Freeblocks are checked before anything is zeroed: a chain that does not parse leaves the page as it is.
  const freeblocks: [number, number][] = []
  for (let block = page.readUInt16BE(at + 1); block !== 0; ) {
    const previousEnd = freeblocks.at(-1)?.[1] ?? contentStart
    const size = block + 4 <= page.length ? page.readUInt16BE(block + 2) : 0
    if (block < previousEnd || size < 4 || block + size > page.length) {
      return
    }
    freeblocks.push([block, block + size])
    block = page.readUInt16BE(block)
  }
  page.fill(0, pointersEnd, contentStart)
  for (const [start, end] of freeblocks) {
    page.fill(0, start + 4, end)
  }
}
