import {
  createCipheriv,
  createDecipheriv,
  randomBytes,
  type ScryptOptions,
  scrypt as scryptCallback,
} from 'node:crypto'
import { chmodSync, mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { createFileOnce } from '../files/create-file-once.js'

export const keysFolder = 'keys'
const keyFile = 'secrets.key'
const keyBytes = 32
const format = 'v1'

/**
 * The relay's secret key, made at first start in `<dataDir>/keys/secrets.key` (mode 0600).
 * Without this folder a backup holds only ciphertext of the secrets it protects.
 */
export function loadOrCreateKey(dataDir: string): Buffer {
  const folder = path.join(dataDir, keysFolder)
  mkdirSync(folder, { recursive: true, mode: 0o700 })
  const file = path.join(folder, keyFile)
  try {
    return checkKey(readFileSync(file), file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw err
    }
  }
  createFileOnce(file, randomBytes(keyBytes), 0o600)
  chmodSync(file, 0o600)
  return checkKey(readFileSync(file), file)
}

function checkKey(key: Buffer, file: string): Buffer {
  if (key.length !== keyBytes) {
    throw new Error(`${file} is not a ${keyBytes}-byte key; restore it from a backup`)
  }
  return key
}

/** AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>`, base64url parts. Tampering fails to open. */
export function seal(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return [format, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.')
}

export function open(key: Buffer, sealed: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.')
  if (version !== format || !iv || !tag || ciphertext === undefined) {
    throw new Error('not a sealed secret')
  }
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8')
}

const scryptParams: ScryptOptions = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }

function scrypt(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password, salt, keyBytes, scryptParams, (err, derived) => (err ? reject(err) : resolve(derived)))
  })
}

/** A key derived from a user's password: `salt` is stored beside what it seals. */
export async function passwordKey(
  password: string,
  salt: Buffer = randomBytes(16),
): Promise<{ key: Buffer; salt: Buffer }> {
  return { key: await scrypt(password, salt), salt }
}
