import yauzl from 'yauzl'

export type ZipEntryBytes = { bytes: Buffer; compressionMethod: number }

/**
 * Each entry of the ZIP `file` by name, read whole: unpacked, or with `asStored` the bytes as the
 * archive holds them (a deflated entry still deflated). For the small archives of tests.
 */
export async function readZipEntries(file: string, { asStored = false } = {}): Promise<Map<string, ZipEntryBytes>> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false })
  const entries = new Map<string, ZipEntryBytes>()
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', async (entry: yauzl.Entry) => {
        try {
          const raw = asStored && entry.compressionMethod !== 0
          const chunks: Buffer[] = []
          for await (const chunk of await zip.openReadStreamPromise(entry, raw ? { decompress: false } : {})) {
            chunks.push(chunk as Buffer)
          }
          entries.set(entry.fileName, { bytes: Buffer.concat(chunks), compressionMethod: entry.compressionMethod })
          zip.readEntry()
        } catch (err) {
          reject(err)
        }
      })
      zip.once('end', resolve)
      zip.on('error', reject)
      zip.readEntry()
    })
  } finally {
    zip.close()
  }
  return entries
}
