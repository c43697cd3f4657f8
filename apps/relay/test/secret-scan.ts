import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

/** A credential that went over the wire, named for the failure message. */
export type Secret = { kind: string; value: string }

/** Bytes that could hold a secret, and where they came from. */
export type Haystack = { where: string; bytes: Buffer }

/** Shorter byte strings could turn up by chance in megabytes of database pages. */
const shortestTellTale = 12
const base64url = /^[A-Za-z0-9_-]+$/

/**
 * The byte strings that would give `value` away: the text itself, its hex and base64url
 * encodings, and for base64url values (opaque tokens, cookie values, JWT signatures) the bytes
 * they encode, raw and in hex. For a JWT the signature alone counts too: it is what cannot be forged.
 */
export function tellTales(value: string): Buffer[] {
  const text = Buffer.from(value, 'utf8')
  const forms: Buffer[] = [text, Buffer.from(text.toString('hex')), Buffer.from(text.toString('base64url'))]
  const parts = value.split('.')
  const signature = parts.length === 3 ? (parts[2] ?? '') : undefined
  if (signature !== undefined && base64url.test(signature)) {
    forms.push(Buffer.from(signature), ...decoded(signature))
  } else if (base64url.test(value)) {
    forms.push(...decoded(value))
  }
  return forms.filter((form) => form.length >= shortestTellTale)
}

function decoded(part: string): Buffer[] {
  const bytes = Buffer.from(part, 'base64url')
  return [bytes, Buffer.from(bytes.toString('hex'))]
}

/** Every regular file under `dir`, read whole, named relative to `dir` with `label` in front. */
export function filesUnder(dir: string, label: string): Haystack[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const file = path.join(entry.parentPath, entry.name)
      return { where: `${label} ${path.relative(dir, file)}`, bytes: readFileSync(file) }
    })
}

/** Where each secret turns up, in any of its forms: one line per secret and place. */
export function findLeaks(secrets: Secret[], haystacks: Haystack[]): string[] {
  const leaks: string[] = []
  for (const secret of secrets) {
    const forms = tellTales(secret.value)
    for (const haystack of haystacks) {
      if (forms.some((form) => haystack.bytes.includes(form))) {
        leaks.push(`${secret.kind} (${secret.value.slice(0, 8)}…) in ${haystack.where}`)
      }
    }
  }
  return leaks
}
