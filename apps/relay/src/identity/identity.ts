import { randomUUID } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { createFileOnce } from '../files/create-file-once.js'

export const identityFile = 'identity.json'

export type Identity = { backendId: string; createdAt: string }

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The relay's identity, created once at first start and kept in `<dataDir>/identity.json`.
 * The cloud ties backups to this id, so a damaged file stops startup rather than minting a new one.
 */
export function loadOrCreateIdentity(dataDir: string, now: Date = new Date()): Identity {
  mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, identityFile)
  const existing = readIdentity(file)
  if (existing) {
    return existing
  }
  const identity: Identity = { backendId: randomUUID(), createdAt: now.toISOString() }
  createFileOnce(file, `${JSON.stringify(identity, null, 2)}\n`)
  return readIdentity(file) ?? identity
}

function readIdentity(file: string): Identity | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return undefined
    }
    throw err
  }
  let parsed: Partial<Identity>
  try {
    parsed = JSON.parse(text) as Partial<Identity>
  } catch {
    throw new Error(`${file} is not valid JSON; restore it from a backup or remove it to create a new backend id`)
  }
  if (typeof parsed.backendId !== 'string' || !uuidPattern.test(parsed.backendId)) {
    throw new Error(`${file} holds no valid backendId; restore it from a backup or remove it to create a new one`)
  }
  return { backendId: parsed.backendId.toLowerCase(), createdAt: String(parsed.createdAt ?? '') }
}
