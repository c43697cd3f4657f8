import { describe, expect, it } from 'vitest'
import { decoyPasswordHash, hashPassword, verifyPassword } from './passwords.js'

describe('password hashes', () => {
  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('correct horse battery staple')
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$[\w-]+\$[\w-]+$/)
    expect(hash).not.toContain('correct')
    await expect(verifyPassword('correct horse battery staple', hash)).resolves.toBe(true)
    await expect(verifyPassword('correct horse battery stapl', hash)).resolves.toBe(false)
  })

  it('salts every hash', async () => {
    expect(await hashPassword('same')).not.toBe(await hashPassword('same'))
  })

  it('treats equivalent Unicode forms as one password', async () => {
    const hash = await hashPassword('caf\u00e9')
    await expect(verifyPassword('cafe\u0301', hash)).resolves.toBe(true)
  })

  it('never matches a malformed hash', async () => {
    await expect(verifyPassword('x', 'plain-text')).resolves.toBe(false)
    await expect(verifyPassword('x', 'scrypt$1$1$1$$')).resolves.toBe(false)
    await expect(verifyPassword('x', await decoyPasswordHash())).resolves.toBe(false)
  })
})
