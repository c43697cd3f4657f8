import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir } from '@relay/testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { identityFile, loadOrCreateIdentity } from './identity.js'

describe('backend identity', () => {
  let folder: ReturnType<typeof tempDir>
  beforeEach(() => {
    folder = tempDir()
  })
  afterEach(() => folder.remove())

  it('creates a UUID at first start and keeps it', () => {
    const now = new Date('2026-01-02T03:04:05.000Z')
    const first = loadOrCreateIdentity(folder.path, now)
    expect(first.backendId).toMatch(/^[0-9a-f-]{36}$/)
    expect(first.createdAt).toBe(now.toISOString())
    expect(loadOrCreateIdentity(folder.path)).toEqual(first)
    expect(JSON.parse(readFileSync(path.join(folder.path, identityFile), 'utf8'))).toEqual(first)
  })

  it('creates the data folder when it is missing', () => {
    const nested = path.join(folder.path, 'a', 'b')
    expect(loadOrCreateIdentity(nested).backendId).toBeTruthy()
  })

  it('refuses a damaged identity file rather than minting a new id', () => {
    const file = path.join(folder.path, identityFile)
    writeFileSync(file, '{ not json')
    expect(() => loadOrCreateIdentity(folder.path)).toThrow(/not valid JSON/)
    writeFileSync(file, JSON.stringify({ backendId: 'nope' }))
    expect(() => loadOrCreateIdentity(folder.path)).toThrow(/no valid backendId/)
  })
})
