import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto'

/** Cost parameters of new hashes; stored hashes carry their own, so they can be raised later. */
const defaults: Cost = { N: 2 ** 15, r: 8, p: 1 }
const keyLength = 32

type Cost = { N: number; r: number; p: number }

function scrypt(password: string, salt: Buffer, options: Cost): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(
      password.normalize('NFKC'),
      salt,
      keyLength,
      { ...options, maxmem: 256 * options.N * options.r },
      (err, key) => (err ? reject(err) : resolve(key)),
    )
  })
}

/** `scrypt$N$r$p$<salt>$<hash>` with base64url parts. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const hash = await scrypt(password, salt, defaults)
  return ['scrypt', defaults.N, defaults.r, defaults.p, salt.toString('base64url'), hash.toString('base64url')].join(
    '$',
  )
}

/** Constant-time check of a password against a stored hash; a malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || !salt || !hash) {
    return false
  }
  const expected = Buffer.from(hash, 'base64url')
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

let decoy: Promise<string> | undefined

/** A hash to verify against when an account does not exist, so that timing does not tell. */
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('base64url'))
  return decoy
}
