import { createHash, randomBytes } from 'node:crypto'
import { AppError, DAY, HOUR, invalidField } from '@relay/contracts'
import { type Clock, hashPassword, type RateLimiter, type RateLimitPolicy } from '@relay/server-kit'
import type { Kysely } from 'kysely'
import type { CloudDB } from '../db/schema.js'
import type { Account } from '../directory/directory.js'
import { emailProblem, nameProblem, passwordProblem, type UserDirectory } from '../directory/service.js'
import { type Mailer, type MailLog, MailNotSent } from '../mail/index.js'
import {
  confirmEmailChangeMail,
  emailChangedMail,
  emailTakenMail,
  noAccountMail,
  resetPasswordMail,
  signUpAgainMail,
  verifyEmailMail,
} from './messages.js'
import { registrationPaths, withReturn } from './paths.js'
import {
  consumeEmailToken,
  deleteExpiredEmailTokens,
  type EmailTokenPurpose,
  findUsableEmailToken,
  insertEmailToken,
  retireEmailTokens,
} from './repo.js'

/** How long each kind of mailed link works. */
export const linkLifetimes = {
  'verify-email': DAY,
  'reset-password': HOUR,
  'change-email': DAY,
} as const satisfies Record<EmailTokenPurpose, number>

/** Token buckets for mail sent on request, so the forms cannot be used to flood an inbox or probe at speed. */
export const mailLimits = {
  /** Sign-ups, resets and resends asked for from one client address, whatever the recipient. */
  address: { capacity: 20, refillEvery: HOUR },
  /** Mails to one address, whoever asks. */
  recipient: { capacity: 5, refillEvery: HOUR },
  /** Email changes asked for by one account. */
  account: { capacity: 5, refillEvery: HOUR },
} as const satisfies Record<string, RateLimitPolicy>

/** Too many mails asked for: by this client, to this address, or by this account. */
export class MailThrottled extends AppError {
  readonly minutes: number

  constructor(retryAfterMs: number) {
    const minutes = Math.max(1, Math.ceil(retryAfterMs / 60_000))
    super(
      'RATE_LIMITED',
      `Too many emails were asked for. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      {
        headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
      },
    )
    this.minutes = minutes
  }
}

export type NewAccount = { email: string; name: string; password: string }
/** Who asked: the client's address (for the throttle) and the relay sign-in to link back to, if any. */
export type Requester = { ip: string; uid?: string }
export type EmailChangeOutcome = { status: 'changed'; email: string } | { status: 'taken'; email: string }

export type RegistrationDeps = {
  db: Kysely<CloudDB>
  directory: UserDirectory
  mailer: Mailer
  clock: Clock
  /** The cloud's public address, which mailed links point to. */
  publicUrl: string
  /** Ends every relay session of an account (after a password reset). */
  revokeAllSessions: (accountId: string) => Promise<number>
  limiter: RateLimiter
  log: MailLog
}

/** A link's token: 256 random bits, url-safe. Only its SHA-256 is stored. */
const tokenPattern = /^[\w-]{43}$/
const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')

/** What is wrong with a sign-up form's fields, by field; empty when nothing is. */
export function newAccountProblems({ email, name, password }: NewAccount): Partial<Record<keyof NewAccount, string>> {
  const problems: Partial<Record<keyof NewAccount, string>> = {}
  const emailIssue = email.trim() ? emailProblem(email) : 'is required'
  if (emailIssue) {
    problems.email = emailIssue
  }
  const nameIssue = nameProblem(name)
  if (nameIssue) {
    problems.name = nameIssue
  }
  const passwordIssue = passwordProblem(password)
  if (passwordIssue) {
    problems.password = passwordIssue
  }
  return problems
}

/**
 * Self-service accounts: sign-up with a confirmed address, password reset and email change, each
 * through a single-use link mailed to the address in question. No answer tells whether an address
 * has an account: where one exists, its owner is mailed instead.
 */
export function createRegistrationService(deps: RegistrationDeps) {
  const { db, directory, mailer, clock, publicUrl, revokeAllSessions, limiter, log } = deps

  async function throttle(buckets: [keyof typeof mailLimits, string][]) {
    const results = await Promise.all(
      buckets.map(([policy, subject]) => limiter.consume(`mail:${policy}:${subject}`, mailLimits[policy])),
    )
    const refused = results.filter((result) => !result.allowed)
    if (refused.length > 0) {
      throw new MailThrottled(Math.max(...refused.map((result) => result.retryAfterMs)))
    }
  }

  async function issue(purpose: EmailTokenPurpose, userId: string, newEmail: string | null = null) {
    const token = randomBytes(32).toString('base64url')
    const now = clock.now()
    await insertEmailToken(db, {
      tokenHash: hashToken(token),
      purpose,
      userId,
      newEmail,
      createdAt: now,
      expiresAt: new Date(now.getTime() + linkLifetimes[purpose]),
    })
    return token
  }

  const link = (path: string, uid?: string, params?: Record<string, string>) =>
    `${publicUrl}${withReturn(path, uid, params)}`

  async function usable(purpose: EmailTokenPurpose, token: string) {
    return tokenPattern.test(token)
      ? findUsableEmailToken(db, { tokenHash: hashToken(token), purpose, now: clock.now() })
      : undefined
  }

  /** A notice whose failure must not undo what was already done: logged by the mailer, then dropped. */
  async function notify(message: Parameters<Mailer['send']>[0]) {
    await mailer.send(message).catch((err: unknown) => {
      if (!(err instanceof MailNotSent)) {
        throw err
      }
    })
  }

  return {
    /**
     * Creates an unconfirmed account and mails the link that confirms it; for an address that already
     * has an account, mails its owner a note instead and answers the same.
     */
    async signUp(form: NewAccount, { ip, uid }: Requester): Promise<void> {
      const [field, problem] = Object.entries(newAccountProblems(form))[0] ?? []
      if (field && problem) {
        throw invalidField(field, problem)
      }
      const email = form.email.trim()
      await throttle([
        ['address', ip],
        ['recipient', email.toLowerCase()],
      ])
      const existing = await directory.findByEmail(email)
      let account: Account | undefined
      if (!existing) {
        account = await directory
          .create({ email, name: form.name, password: form.password, verified: false })
          .catch((err: unknown) => {
            // Another sign-up took the address a moment ago: answered like any known address.
            if (err instanceof AppError && err.code === 'CONFLICT') {
              return undefined
            }
            throw err
          })
      }
      if (!account) {
        // As long as creating an account takes, so timing does not tell either.
        await hashPassword(form.password)
        const owner = existing ?? (await directory.findByEmail(email))
        await mailer.send(signUpAgainMail(owner?.email ?? email, link(registrationPaths.forgotPassword, uid)))
        return
      }
      const token = await issue('verify-email', account.id)
      try {
        await mailer.send(verifyEmailMail(account.email, link(registrationPaths.verifyEmail, uid, { token })))
      } catch (err) {
        // Without its link the account could only be confirmed the long way round: trying again starts afresh.
        await directory.remove(account.id)
        throw err
      }
    },

    /** Mails a fresh confirmation link to an unconfirmed account's address; nothing for any other address. */
    async resendVerification(email: string, { ip, uid }: Requester): Promise<void> {
      if (emailProblem(email)) {
        throw invalidField('email', 'must be an email address')
      }
      await throttle([
        ['address', ip],
        ['recipient', email.trim().toLowerCase()],
      ])
      const account = await directory.findByEmail(email)
      if (account && !account.emailVerified) {
        const token = await issue('verify-email', account.id)
        await mailer.send(verifyEmailMail(account.email, link(registrationPaths.verifyEmail, uid, { token })))
      }
    },

    /** Whether a mailed link can still be used, without using it; for a change, the address it moves to. */
    async checkLink(purpose: EmailTokenPurpose, token: string): Promise<{ newEmail: string | null } | undefined> {
      const row = await usable(purpose, token)
      return row && { newEmail: row.new_email }
    },

    /** Confirms the address the link was mailed to; undefined when the link is unknown, used or expired. */
    async verifyEmail(token: string): Promise<{ email: string } | undefined> {
      if (!tokenPattern.test(token)) {
        return undefined
      }
      const now = clock.now()
      const account = await db.transaction().execute(async (trx) => {
        const used = await consumeEmailToken(trx, { tokenHash: hashToken(token), purpose: 'verify-email', now })
        if (!used) {
          return undefined
        }
        await retireEmailTokens(trx, used.user_id, now, ['verify-email'])
        return directory.markEmailVerified(used.user_id, { now, trx })
      })
      return account && { email: account.email }
    },

    /** Mails a password reset link, or, when the address has no account, a note saying so; answers the same. */
    async requestPasswordReset(email: string, { ip, uid }: Requester): Promise<void> {
      if (emailProblem(email)) {
        throw invalidField('email', 'must be an email address')
      }
      const address = email.trim()
      await throttle([
        ['address', ip],
        ['recipient', address.toLowerCase()],
      ])
      const account = await directory.findByEmail(address)
      if (!account) {
        await mailer.send(noAccountMail(address, link(registrationPaths.signUp, uid)))
        return
      }
      const token = await issue('reset-password', account.id)
      await mailer.send(resetPasswordMail(account.email, link(registrationPaths.resetPassword, uid, { token })))
    },

    /**
     * Sets a new password through a reset link, confirms the address (the link reached it), ends every
     * other link of the account and every relay session. False when the link is unknown, used or expired.
     */
    async resetPassword(token: string, password: string): Promise<boolean> {
      const problem = passwordProblem(password)
      if (problem) {
        throw invalidField('password', problem)
      }
      const row = await usable('reset-password', token)
      const account = row && (await directory.find(row.user_id))
      if (!row || !account) {
        return false
      }
      const now = clock.now()
      const reset = await db.transaction().execute(async (trx) => {
        if (!(await consumeEmailToken(trx, { tokenHash: row.token_hash, purpose: 'reset-password', now }))) {
          return false
        }
        await directory.setPassword(account.id, password, { now, trx })
        if (!account.emailVerified) {
          await directory.markEmailVerified(account.id, { now, trx })
        }
        // A pending email change may be an intruder's: a new password ends it too.
        await retireEmailTokens(trx, account.id, now)
        return true
      })
      if (reset) {
        const ended = await revokeAllSessions(account.id)
        log.info({ accountId: account.id, sessionsEnded: ended }, 'password reset')
      }
      return reset
    },

    /**
     * Mails a link to `newEmail` that moves the account there once followed (24 h, single use). An
     * address that already has an account gets a note instead, and the caller the same answer.
     */
    async requestEmailChange(accountId: string, newEmail: string): Promise<void> {
      const address = newEmail.trim()
      const problem = emailProblem(address)
      if (problem) {
        throw invalidField('email', problem)
      }
      const account = await directory.find(accountId)
      if (!account) {
        throw new AppError('NOT_FOUND', 'No such account')
      }
      if (address.toLowerCase() === account.email.toLowerCase()) {
        throw invalidField('email', 'is already the address of this account')
      }
      await throttle([
        ['account', account.id],
        ['recipient', address.toLowerCase()],
      ])
      if (await directory.findByEmail(address)) {
        await mailer.send(emailTakenMail(address))
        return
      }
      // Only the newest request counts: an older link would move the account somewhere it no longer asks for.
      await retireEmailTokens(db, account.id, clock.now(), ['change-email'])
      const token = await issue('change-email', account.id, address)
      await mailer.send(
        confirmEmailChangeMail(address, link(registrationPaths.confirmEmailChange, undefined, { token })),
      )
    },

    /**
     * Moves the account to the address the link was mailed to and tells the old address. Undefined
     * when the link is unknown, used or expired; `taken` when another account has the address by now.
     */
    async confirmEmailChange(token: string): Promise<EmailChangeOutcome | undefined> {
      const row = await usable('change-email', token)
      const account = row && (await directory.find(row.user_id))
      if (!row?.new_email || !account) {
        return undefined
      }
      const newEmail = row.new_email
      const now = clock.now()
      let changed: Account | undefined
      try {
        changed = await db.transaction().execute(async (trx) => {
          if (!(await consumeEmailToken(trx, { tokenHash: row.token_hash, purpose: 'change-email', now }))) {
            return undefined
          }
          await retireEmailTokens(trx, account.id, now, ['change-email', 'verify-email'])
          return directory.changeEmail(account.id, newEmail, { now, trx })
        })
      } catch (err) {
        if (err instanceof AppError && err.code === 'CONFLICT') {
          return { status: 'taken', email: newEmail }
        }
        throw err
      }
      if (!changed) {
        return undefined
      }
      await notify(emailChangedMail(account.email, changed.email))
      return { status: 'changed', email: changed.email }
    },

    /** Removes links that expired; run hourly with the other cleanups. */
    async pruneExpiredLinks(): Promise<number> {
      return deleteExpiredEmailTokens(db, clock.now())
    },
  }
}

export type RegistrationService = ReturnType<typeof createRegistrationService>
