import { statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { tempDir } from '@relay/testkit'
import { describe, expect, it } from 'vitest'
import { loadOrCreateKey, open, passwordKey, seal } from './secret-box.js'

describe('secret box', () => {
  it('keeps one key file, readable by its owner only', () => {
    const folder = tempDir()
    const key = loadOrCreateKey(folder.path)
    expect(loadOrCreateKey(folder.path).equals(key)).toBe(true)
    expect(statSync(path.join(folder.path, 'keys', 'secrets.key')).mode & 0o777).toBe(0o600)
    folder.remove()
  })

  it('refuses a damaged key file', () => {
    const folder = tempDir()
    loadOrCreateKey(folder.path)
    writeFileSync(path.join(folder.path, 'keys', 'secrets.key'), 'short')
    expect(() => loadOrCreateKey(folder.path)).toThrow(/32-byte key/)
    folder.remove()
  })

  it('seals without the plaintext showing, and detects tampering and wrong keys', async () => {
    const folder = tempDir()
    const key = loadOrCreateKey(folder.path)
    const sealed = seal(key, 'token-abc')
    expect(sealed).not.toContain('token-abc')
    expect(seal(key, 'token-abc')).not.toBe(sealed)
    expect(open(key, sealed)).toBe('token-abc')
    const [version, iv, tag, ciphertext = ''] = sealed.split('.')
    const bytes = Buffer.from(ciphertext, 'base64url')
    bytes[0] = (bytes[0] ?? 0) ^ 1
    const flipped = [version, iv, tag, bytes.toString('base64url')].join('.')
    expect(() => open(key, flipped)).toThrow()
    const { key: other, salt } = await passwordKey('correct horse')
    expect(() => open(other, sealed)).toThrow()
    expect((await passwordKey('correct horse', salt)).key.equals(other)).toBe(true)
    folder.remove()
  })
})
