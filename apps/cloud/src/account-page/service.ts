import {
  AppError,
  type BackupStatusReply,
  backupLimits,
  type CloudSession,
  type LicenseSource,
  MINUTE,
} from '@relay/contracts'
import { type Clock, type SignInThrottle, SignInThrottled } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { AccountService } from '../auth/service.js'
import type { CloudDB } from '../db/schema.js'
import type { Account } from '../directory/directory.js'
import {
  emailProblem,
  isUuid,
  nameMaxLength,
  passwordProblem,
  passwordRules,
  type UserDirectory,
} from '../directory/service.js'
import type { LicenseService } from '../licenses/service.js'
import type { ObjectStore } from '../storage/object-store.js'
import * as repo from './repo.js'
import type { BrowserSessions } from './sessions.js'

/** The payment side the page needs (Stripe Checkout and Customer Portal). */
export type AccountBilling = {
  configured: boolean
  checkout(user: { id: string; email: string }, urls: { success: string; cancel: string }): Promise<string>
  /** Undefined when the user has no customer at the payment provider. */
  portal(userId: string, returnUrl: string): Promise<string | undefined>
  unlinkCustomer(userId: string): Promise<void>
}

export type AccountPageDeps = {
  db: Kysely<CloudDB>
  clock: Clock
  log: FastifyBaseLogger
  directory: Pick<UserDirectory, 'find' | 'authenticate' | 'rename' | 'setPassword'>
  account: Pick<AccountService, 'listSessions' | 'revokeSession'> & {
    revokeAllSessions(accountId: string): Promise<number>
  }
  registration: { requestEmailChange(accountId: string, newEmail: string): Promise<void> }
  billing: AccountBilling
  licenses: Pick<LicenseService, 'check' | 'change'>
  backups: { status(userId: string): Promise<BackupStatusReply>; store: ObjectStore; forgetRecent(): void }
  browserSessions: BrowserSessions
  /** Password checks share the sign-in's buckets: a stolen session cannot guess the password faster. */
  throttle: SignInThrottle
}

/** A signed-in person as the page shows them. */
export type PageAccount = { id: string; email: string; name: string; emailVerified: boolean }

export type RelayUsage = { backendId: string; count: number; bytes: number; newest: Date }

export type DownloadableBackup = {
  id: string
  backendId: string
  filename: string
  bytes: number
  createdAt: Date
  expiresAt: Date | null
}

export type AccountOverview = {
  account: PageAccount
  license: { valid: boolean; source: LicenseSource | null; renewsAt: Date | null }
  billingConfigured: boolean
  relaySessions: CloudSession[]
  browserSessions: Awaited<ReturnType<BrowserSessions['list']>>
  usage: BackupStatusReply['usage']
  relays: RelayUsage[]
  backups: DownloadableBackup[]
}

/** How long a download link from the page works: enough to start it, short enough not to be worth sharing. */
const downloadLinkSeconds = (5 * MINUTE) / 1000

export function toPageAccount(account: Account): PageAccount {
  return { id: account.id, email: account.email, name: account.name, emailVerified: account.emailVerified }
}

/** What the account page does for the signed-in person; every call names the user it acts for. */
export function createAccountPageService(deps: AccountPageDeps) {
  const { db, clock, log, directory, account, registration, billing, licenses, backups, browserSessions } = deps

  /** Counts a password attempt for the account and the address; refused once either has guessed too often. */
  async function attempt(email: string, address: string) {
    try {
      return await deps.throttle.attempt(email, address)
    } catch (err) {
      if (!(err instanceof SignInThrottled)) {
        throw err
      }
      const wait = `${err.minutes} minute${err.minutes === 1 ? '' : 's'}`
      throw new AppError('RATE_LIMITED', `Too many attempts with a wrong password. Try again in ${wait}.`, {
        headers: err.headers,
      })
    }
  }

  /** Checks a password of the signed-in account, throttled like a sign-in. */
  async function confirmPassword(user: PageAccount, password: string, address: string): Promise<void> {
    const pending = await attempt(user.email, address)
    const matched = await directory.authenticate(user.email, password)
    if (matched?.id !== user.id) {
      throw new AppError('UNAUTHORIZED', 'Your current password is not correct.')
    }
    await pending.succeeded()
  }

  return {
    /** The account for a sign-in on the page; refused for a wrong password and an unconfirmed address. */
    async signIn(email: string, password: string, address: string): Promise<PageAccount> {
      const pending = await attempt(email, address)
      const account = await directory.authenticate(email, password)
      if (!account) {
        throw new AppError('UNAUTHORIZED', 'The email or password is not correct.')
      }
      await pending.succeeded()
      if (!account.emailVerified) {
        throw new AppError(
          'FORBIDDEN',
          `Confirm your email address first: we sent a link to ${account.email}. Follow it, then sign in here.`,
        )
      }
      return toPageAccount(account)
    },

    async overview(user: PageAccount, currentSessionId: string): Promise<AccountOverview> {
      const [license, subscription, relaySessions, sessions, status, completed] = await Promise.all([
        licenses.check(user.id),
        repo.findActiveSubscription(db, user.id),
        account.listSessions({ id: user.id, sessionId: undefined }),
        browserSessions.list(user.id, currentSessionId),
        backups.status(user.id),
        repo.listCompletedBackups(db, user.id),
      ])
      const downloads = completed.map((row) => ({
        id: row.id,
        backendId: row.backend_id,
        filename: row.filename,
        bytes: Number(row.compressed_size),
        createdAt: row.created_at,
        expiresAt: row.expires_at,
      }))
      return {
        account: user,
        license: {
          valid: license.valid,
          source: license.source,
          renewsAt: license.source === 'subscription' ? (subscription?.current_period_end ?? null) : null,
        },
        billingConfigured: billing.configured,
        relaySessions,
        browserSessions: sessions,
        usage: status.usage,
        relays: usageByRelay(downloads),
        backups: downloads,
      }
    },

    async changeName(user: PageAccount, name: string): Promise<void> {
      const trimmed = name.trim()
      if (!trimmed) {
        throw new AppError('INVALID_REQUEST', 'Enter the name you want to be shown.')
      }
      if (trimmed.length > nameMaxLength) {
        throw new AppError('INVALID_REQUEST', `Your name can be at most ${nameMaxLength} characters.`)
      }
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
      if (/[\u0000-\u001f\u007f]/.test(trimmed)) {
        throw new AppError('INVALID_REQUEST', 'Your name cannot contain control characters. Type it again.')
      }
      await directory.rename(user.id, trimmed, { now: clock.now() })
    },

    /**
     * Sets a new password and signs out every relay and every other browser: whoever knew the old
     * password may hold a session. The browser that made the change stays signed in.
     */
    async changePassword(
      user: PageAccount,
      change: { current: string; next: string; repeated: string },
      { address, keepSessionId }: { address: string; keepSessionId: string },
    ): Promise<void> {
      if (passwordProblem(change.next)) {
        throw new AppError(
          'INVALID_REQUEST',
          `Choose a new password of ${passwordRules.minLength} to ${passwordRules.maxLength} characters.`,
        )
      }
      if (change.next !== change.repeated) {
        throw new AppError('INVALID_REQUEST', 'The new password and its repetition differ. Type it twice the same way.')
      }
      await confirmPassword(user, change.current, address)
      await directory.setPassword(user.id, change.next, { now: clock.now() })
      const relays = await account.revokeAllSessions(user.id)
      const browsers = await repo.deleteSessions(db, user.id, { except: keepSessionId })
      log.info({ userId: user.id, relays, browsers }, 'password changed; other sessions ended')
    },

    async requestEmailChange(user: PageAccount, newEmail: string, password: string, address: string): Promise<void> {
      const email = newEmail.trim()
      if (!email) {
        throw new AppError('INVALID_REQUEST', 'Enter the new email address.')
      }
      if (emailProblem(email) || email.includes('\u0000')) {
        throw new AppError('INVALID_REQUEST', 'Enter a valid email address, such as name@example.com.')
      }
      if (email.toLowerCase() === user.email.toLowerCase()) {
        throw new AppError('INVALID_REQUEST', 'That is already your email address.')
      }
      await confirmPassword(user, password, address)
      await registration.requestEmailChange(user.id, email)
    },

    checkout(user: PageAccount, urls: { success: string; cancel: string }): Promise<string> {
      if (!billing.configured) {
        throw new AppError('CONFLICT', billingNotConfigured)
      }
      return billing.checkout({ id: user.id, email: user.email }, urls)
    },

    async portal(user: PageAccount, returnUrl: string): Promise<string> {
      if (!billing.configured) {
        throw new AppError('CONFLICT', billingNotConfigured)
      }
      const url = await billing.portal(user.id, returnUrl)
      if (!url) {
        throw new AppError('CONFLICT', 'You have no subscription to manage yet. Choose "Upgrade to Pro" to start one.')
      }
      return url
    },

    async revokeRelaySession(user: PageAccount, sessionId: string): Promise<void> {
      await account.revokeSession(user.id, sessionId)
    },

    async endBrowserSession(user: PageAccount, sessionId: string): Promise<void> {
      if (!(await browserSessions.end(user.id, sessionId))) {
        throw new AppError('NOT_FOUND', 'That sign-in no longer exists. It may have ended already.')
      }
    },

    /** A short-lived download link for one of the user's completed backups, whatever their license. */
    async downloadUrl(user: PageAccount, backupId: string): Promise<string> {
      const backup = isUuid(backupId) ? await repo.findCompletedBackup(db, user.id, backupId) : undefined
      if (!backup) {
        throw new AppError('NOT_FOUND', 'There is no such backup in your account. It may have expired or been deleted.')
      }
      const download = await backups.store.presignDownload(backup.s3_key, {
        expiresInSeconds: Math.min(downloadLinkSeconds, backupLimits.presignedUrlValidity / 1000),
        filename: backup.filename,
      })
      return download.url
    },

    /**
     * Deletes the account and everything it holds. The payment link goes first (no charge may follow),
     * then every relay session; the backups' files are deleted inside the transaction that removes the
     * records and the user, so if the store fails nothing is removed and the person can try again.
     */
    async deleteAccount(user: PageAccount, password: string, address: string): Promise<void> {
      await confirmPassword(user, password, address)
      await billing.unlinkCustomer(user.id)
      await account.revokeAllSessions(user.id)
      const keys = await licenses.change(async ({ trx, setGifted }) => {
        // Clears the gift and, once this commits, every instance's cached license for the user.
        await setGifted(user.id, false)
        const removed = await repo.removeBackupsOf(trx, user.id)
        if (!removed) {
          throw new AppError('NOT_FOUND', 'This account no longer exists.')
        }
        if (removed.length > 0) {
          await backups.store.delete(removed)
        }
        await repo.deleteUser(trx, user.id)
        return removed
      })
      backups.forgetRecent()
      // An upload may have landed between the delete and the commit; its record is gone, so is its file now.
      await backups.store.delete(keys).catch((err: unknown) => {
        log.warn({ err, userId: user.id }, 'files of a deleted account not deleted again')
      })
      log.info({ userId: user.id, backups: keys.length }, 'account deleted')
    },
  }
}

export type AccountPageService = ReturnType<typeof createAccountPageService>

export const billingNotConfigured =
  'Billing is not configured on this cloud. An operator grants licenses with `npm run cloud -- users gift`.'

function usageByRelay(backups: DownloadableBackup[]): RelayUsage[] {
  const relays = new Map<string, RelayUsage>()
  for (const backup of backups) {
    const relay = relays.get(backup.backendId)
    if (relay) {
      relay.count += 1
      relay.bytes += backup.bytes
    } else {
      relays.set(backup.backendId, {
        backendId: backup.backendId,
        count: 1,
        bytes: backup.bytes,
        newest: backup.createdAt,
      })
    }
  }
  return [...relays.values()]
}
