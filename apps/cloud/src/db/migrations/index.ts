import type { Migration } from 'kysely'
import * as users from './0001-users.js'
import * as oauth from './0002-oauth.js'
import * as licenses from './0003-licenses.js'
import * as backups from './0004-backups.js'
import * as hashedOAuthIds from './0005-hashed-oauth-ids.js'
import * as objectStoreIdentity from './0006-object-store-identity.js'
import * as cleanupRuns from './0007-cleanup-runs.js'
import * as emailVerification from './0008-email-verification.js'
import * as stripeCustomers from './0009-stripe-customers.js'
import * as accountSessions from './0010-account-sessions.js'

/** Every migration, in order. Listed here (not read from disk) so src and dist run the same set. */
export const migrations: Record<string, Migration> = {
  '0001-users': users,
  '0002-oauth': oauth,
  '0003-licenses': licenses,
  '0004-backups': backups,
  '0005-hashed-oauth-ids': hashedOAuthIds,
  '0006-object-store-identity': objectStoreIdentity,
  '0007-cleanup-runs': cleanupRuns,
  '0008-email-verification': emailVerification,
  '0009-stripe-customers': stripeCustomers,
  '0010-account-sessions': accountSessions,
}
