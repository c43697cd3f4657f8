import { linkSync, unlinkSync, writeFileSync } from 'node:fs'

/**
 * Creates `file` with `data` unless it exists. The data is written whole to a temp file first and then
 * linked into place, so the file is never seen half-written and a concurrent creator cannot overwrite it.
 */
export function createFileOnce(file: string, data: string | Uint8Array, mode = 0o644): void {
  const temp = `${file}.${process.pid}.tmp`
  writeFileSync(temp, data, { mode })
  try {
    linkSync(temp, file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw err
    }
  } finally {
    unlinkSync(temp)
  }
}
