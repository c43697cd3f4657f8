import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { CloudDB } from '../src/db/schema.js'
import { createUserDirectory } from '../src/directory/service.js'

/** A new account with a unique email address, created through the directory. */
export function createTestUser(db: Kysely<CloudDB>, email = `${randomUUID()}@example.com`) {
  return createUserDirectory({ db }).create({ email, password: 'correct horse battery' })
}
