import { randomBytes } from 'node:crypto'
import type { LicenseService } from '../licenses/service.js'
import type { UserDirectory } from './service.js'

export const demoEmail = 'demo@relay.local'

/**
 * The account `npm start` signs in with: created once, with a gifted license. Its random
 * password exists only in what this returns (the caller prints it once); it is never stored
 * or logged. Returns undefined when the account already exists.
 */
export async function seedDemoAccount(
  directory: UserDirectory,
  licenses: Pick<LicenseService, 'setGifted'>,
): Promise<{ email: string; password: string } | undefined> {
  if (await directory.findByEmail(demoEmail)) {
    return undefined
  }
  const password = randomBytes(12).toString('base64url')
  const account = await directory.create({ email: demoEmail, name: 'Demo', password })
  await licenses.setGifted(account.id, true)
  return { email: demoEmail, password }
}
