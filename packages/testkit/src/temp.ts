import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

/** A fresh folder under the system temp dir; `remove()` deletes it and everything in it. */
export function tempDir(prefix = 'relay-test-'): { path: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix))
  return { path: dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}
