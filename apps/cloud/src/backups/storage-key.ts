import { backupLimits } from '@relay/contracts'

const unsafe = /[^A-Za-z0-9._-]+/g

/** Keeps `[A-Za-z0-9._-]`, never a dot-dot, never empty, at most `max` characters. */
export function sanitizeKeyPart(value: string, max: number): string {
  const cleaned = value
    .replace(unsafe, '_')
    .replace(/\.{2,}/g, '.')
    .replace(/^[.-]+/, '')
    .slice(0, max)
  return cleaned || 'backup'
}

/**
 * `backups/{userId}/{backendId}/{YYYY-MM-DD}/{backupId}_{filename}.zip`, every part sanitized.
 * A filename already ending in `.zip` is not given a second one.
 */
export function storageKey(parts: {
  userId: string
  backendId: string
  date: Date
  backupId: string
  filename: string
}) {
  const day = parts.date.toISOString().slice(0, 10)
  const name = sanitizeKeyPart(parts.filename.replace(/\.zip$/i, ''), 180)
  const key = `backups/${sanitizeKeyPart(parts.userId, 64)}/${sanitizeKeyPart(parts.backendId, 120)}/${day}/${parts.backupId}_${name}.zip`
  return key.slice(0, backupLimits.storageKeyMaxLength)
}
