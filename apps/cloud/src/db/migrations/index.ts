import type { Migration } from 'kysely'
import * as users from './0001-users.js'

/** Every migration, in order. Listed here (not read from disk) so src and dist run the same set. */
export const migrations: Record<string, Migration> = {
  '0001-users': users,
}
