import path from 'node:path'
import { type Static, Type } from 'typebox'
import { Value } from 'typebox/value'

export const manifestEntry = 'manifest.json'
export const databaseEntry = 'relay.db'
export const identityEntry = 'identity.json'
export const keysFolder = 'keys'
export const frameEngineFolder = 'frame-engine'
export const manifestFormatVersion = 1

/** One file of the archive besides the manifest: its path inside the data folder, size and SHA-256 (hex). */
export const BackupManifestEntry = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 1024 }),
    size: Type.Integer({ minimum: 0 }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  },
  { additionalProperties: false },
)
export type BackupManifestEntry = Static<typeof BackupManifestEntry>

/**
 * `manifest.json`, the last entry of every backup archive. `schemaVersion` is the name of the newest
 * migration the database had; `createdAt` is ISO 8601 UTC.
 */
export const BackupManifest = Type.Object(
  {
    formatVersion: Type.Literal(manifestFormatVersion),
    appVersion: Type.String({ minLength: 1, maxLength: 100 }),
    backendId: Type.String({ minLength: 1, maxLength: 255 }),
    createdAt: Type.String({ minLength: 1, maxLength: 40 }),
    schemaVersion: Type.String({ minLength: 1, maxLength: 255 }),
    entries: Type.Array(BackupManifestEntry, { maxItems: 100_000 }),
  },
  { additionalProperties: false },
)
export type BackupManifest = Static<typeof BackupManifest>

/** The manifest in `text`, or an error saying what is wrong with it. */
export function parseManifest(text: string): BackupManifest {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new Error('manifest.json is not valid JSON')
  }
  if (!Value.Check(BackupManifest, value)) {
    const first = Value.Errors(BackupManifest, value)[0]
    const where = first?.instancePath || 'manifest'
    throw new Error(
      `manifest.json does not match format version ${manifestFormatVersion}: ${where} ${first?.message ?? ''}`,
    )
  }
  if (Number.isNaN(Date.parse(value.createdAt))) {
    throw new Error('manifest.json has no valid createdAt')
  }
  const names = new Set<string>()
  for (const entry of value.entries) {
    const problem = entryNameProblem(entry.name)
    if (problem || entry.name === manifestEntry) {
      throw new Error(`manifest.json lists an entry it may not: ${problem ?? entry.name}`)
    }
    if (names.has(entry.name)) {
      throw new Error(`manifest.json lists ${entry.name} twice`)
    }
    names.add(entry.name)
  }
  if (!names.has(databaseEntry)) {
    throw new Error(`manifest.json does not list ${databaseEntry}`)
  }
  return value
}

/**
 * Why `name` may not be an entry of a backup archive, or undefined when it may. An entry is a relative
 * path with `/` separators that stays inside the data folder and belongs to what a backup holds: the
 * database, the manifest, `identity.json`, or a file under `keys/` or `frame-engine/`.
 */
export function entryNameProblem(name: string): string | undefined {
  if (name.length === 0 || Buffer.byteLength(name) > 1024) {
    return `entry name of ${Buffer.byteLength(name)} bytes`
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (/[\u0000-\u001f\u007f\\]/.test(name)) {
    return `entry name with a backslash or control character: ${JSON.stringify(name)}`
  }
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) {
    return `absolute entry name: ${name}`
  }
  const segments = name.split('/')
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
    return `entry name with an empty, . or .. segment: ${name}`
  }
  const [top] = segments
  const isFile = segments.length === 1 && [databaseEntry, manifestEntry, identityEntry].includes(name)
  const isComponent = segments.length > 1 && (top === keysFolder || top === frameEngineFolder)
  if (!isFile && !isComponent) {
    return `entry that is not part of a relay backup: ${name}`
  }
  // The rules above already keep every name inside; this states the property the extractor relies on.
  const root = path.resolve('/data')
  if (!path.resolve(root, ...segments).startsWith(`${root}${path.sep}`)) {
    return `entry outside the data folder: ${name}`
  }
  return undefined
}
