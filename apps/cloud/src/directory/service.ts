import { AppError, invalidField } from '@relay/contracts'
import { decoyPasswordHash, hashPassword, verifyPassword } from '@relay/server-kit'
import type { Kysely, Transaction } from 'kysely'
import type { CloudDB } from '../db/schema.js'
import type { Account, IdentityDirectory } from './directory.js'
import {
  deleteUser,
  findUserByEmail,
  findUserById,
  insertUser,
  listUsers,
  mergeUserMetadata,
  type UserRow,
  updateUser,
} from './repo.js'

export const passwordRules = { minLength: 8, maxLength: 256 } as const
export const nameMaxLength = 255
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export type NewUser = {
  email: string
  name?: string
  password: string
  /** Whether the address counts as confirmed: yes for accounts an operator makes, no for sign-ups. */
  verified?: boolean
}

type Change = { now: Date; trx?: Transaction<CloudDB> }

/** What is wrong with an address as typed (trimmed first), or undefined when it can be an account's. */
export function emailProblem(email: string): string | undefined {
  const address = email.trim()
  return emailPattern.test(address) && canExist(address) ? undefined : 'must be an email address'
}

/** What is wrong with a display name (trimmed first; blank is allowed where a default exists). */
export function nameProblem(name: string): string | undefined {
  const trimmed = name.trim()
  return trimmed.length > nameMaxLength || trimmed.includes('\u0000')
    ? `must be at most ${nameMaxLength} characters of text`
    : undefined
}

/** What is wrong with a new password, or undefined when it follows the rules. */
export function passwordProblem(password: string): string | undefined {
  const { minLength, maxLength } = passwordRules
  return password.length < minLength || password.length > maxLength
    ? `must be ${minLength} to ${maxLength} characters`
    : undefined
}

function checked(field: string, problem: string | undefined) {
  if (problem) {
    throw invalidField(field, problem)
  }
}

/** The unique index on lower(email) refused the row: another account took the address first. */
function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505'
}

const addressTaken = (address: string) => new AppError('CONFLICT', `An account for ${address} already exists`)

/** PostgreSQL text cannot hold NUL, so an address with one names nobody (and must not reach a query). */
const canExist = (email: string) => email.length <= 255 && !email.includes('\u0000')

/** The built-in account directory: users in the cloud database with scrypt password hashes. */
export function createUserDirectory({ db }: { db: Kysely<CloudDB> }) {
  return {
    async authenticate(email: string, password: string): Promise<Account | null> {
      const user = canExist(email) ? await findUserByEmail(db, email.trim()) : undefined
      // Hash even when there is no such user, so the answer takes as long either way.
      const matches = await verifyPassword(password, user?.password_hash ?? (await decoyPasswordHash()))
      return user?.password_hash && matches ? toAccount(user) : null
    },

    async find(accountId: string): Promise<Account | undefined> {
      if (!isUuid(accountId)) {
        return undefined
      }
      const user = await findUserById(db, accountId)
      return user && toAccount(user)
    },

    async findByEmail(email: string): Promise<Account | undefined> {
      const user = canExist(email) ? await findUserByEmail(db, email.trim()) : undefined
      return user && toAccount(user)
    },

    async create({ email, name, password, verified = true }: NewUser): Promise<Account> {
      const address = email.trim()
      checked('email', emailProblem(address))
      checked('password', passwordProblem(password))
      checked('name', nameProblem(name ?? ''))
      if (await findUserByEmail(db, address)) {
        throw addressTaken(address)
      }
      const passwordHash = await hashPassword(password)
      try {
        const user = await insertUser(db, {
          email: address,
          name: name?.trim() || address.slice(0, address.indexOf('@')),
          passwordHash,
          emailVerifiedAt: verified ? new Date() : null,
        })
        return toAccount(user)
      } catch (err) {
        throw isUniqueViolation(err) ? addressTaken(address) : err
      }
    },

    /** Marks the account's address as confirmed. Undefined when there is no such account. */
    async markEmailVerified(accountId: string, { now, trx }: Change): Promise<Account | undefined> {
      const user = isUuid(accountId) ? await updateUser(trx ?? db, accountId, { emailVerifiedAt: now }, now) : undefined
      return user && toAccount(user)
    },

    /** Replaces the account's password (checked against `passwordRules`). Undefined when there is no such account. */
    async setPassword(accountId: string, password: string, { now, trx }: Change): Promise<Account | undefined> {
      checked('password', passwordProblem(password))
      const passwordHash = await hashPassword(password)
      const user = isUuid(accountId) ? await updateUser(trx ?? db, accountId, { passwordHash }, now) : undefined
      return user && toAccount(user)
    },

    /** Renames the account (a blank name is refused). Undefined when there is no such account. */
    async rename(accountId: string, name: string, { now, trx }: Change): Promise<Account | undefined> {
      const trimmed = name.trim()
      checked('name', trimmed ? nameProblem(trimmed) : 'must not be blank')
      const user = isUuid(accountId) ? await updateUser(trx ?? db, accountId, { name: trimmed }, now) : undefined
      return user && toAccount(user)
    },

    /**
     * Moves the account to a new, confirmed address: the caller has proved the owner reads it.
     * Throws CONFLICT when another account has the address. Undefined when there is no such account.
     */
    async changeEmail(accountId: string, email: string, { now, trx }: Change): Promise<Account | undefined> {
      const address = email.trim()
      checked('email', emailProblem(address))
      if (!isUuid(accountId)) {
        return undefined
      }
      const owner = await findUserByEmail(trx ?? db, address)
      if (owner && owner.id !== accountId) {
        throw addressTaken(address)
      }
      try {
        const user = await updateUser(trx ?? db, accountId, { email: address, emailVerifiedAt: now }, now)
        return user && toAccount(user)
      } catch (err) {
        throw isUniqueViolation(err) ? addressTaken(address) : err
      }
    },

    /** Deletes the account; false when there is none. What references it in the database goes with it. */
    async remove(accountId: string, { trx }: { trx?: Transaction<CloudDB> } = {}): Promise<boolean> {
      return isUuid(accountId) ? deleteUser(trx ?? db, accountId) : false
    },

    async list(): Promise<Account[]> {
      return (await listUsers(db)).map(toAccount)
    },

    /**
     * Merges `patch` into the account's metadata (a key set to null is removed), inside `trx` when the
     * change is part of a larger one. Undefined when there is no such account.
     */
    async mergeMetadata(
      accountId: string,
      patch: Record<string, unknown>,
      { now, trx }: { now: Date; trx?: Transaction<CloudDB> },
    ): Promise<Account | undefined> {
      const user = isUuid(accountId) ? await mergeUserMetadata(trx ?? db, accountId, patch, now) : undefined
      return user && toAccount(user)
    },
  } satisfies IdentityDirectory & Record<string, unknown>
}

export type UserDirectory = ReturnType<typeof createUserDirectory>

export function toAccount(user: UserRow): Account {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    emailVerified: user.email_verified_at !== null,
    metadata: user.metadata,
  }
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function isUuid(value: string): boolean {
  return uuidPattern.test(value)
}
