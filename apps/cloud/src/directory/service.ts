import { AppError, invalidField } from '@relay/contracts'
import { decoyPasswordHash, hashPassword, verifyPassword } from '@relay/server-kit'
import type { Kysely, Transaction } from 'kysely'
import type { CloudDB } from '../db/schema.js'
import type { Account, IdentityDirectory } from './directory.js'
import { findUserByEmail, findUserById, insertUser, listUsers, mergeUserMetadata, type UserRow } from './repo.js'

export const passwordRules = { minLength: 8, maxLength: 256 } as const
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export type NewUser = { email: string; name?: string; password: string }

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

    async create({ email, name, password }: NewUser): Promise<Account> {
      const address = email.trim()
      if (!emailPattern.test(address) || address.length > 255) {
        throw invalidField('email', 'must be an email address')
      }
      if (password.length < passwordRules.minLength || password.length > passwordRules.maxLength) {
        throw invalidField('password', `must be ${passwordRules.minLength} to ${passwordRules.maxLength} characters`)
      }
      if (await findUserByEmail(db, address)) {
        throw new AppError('CONFLICT', `An account for ${address} already exists`)
      }
      const user = await insertUser(db, {
        email: address,
        name: name?.trim() || address.slice(0, address.indexOf('@')),
        passwordHash: await hashPassword(password),
      })
      return toAccount(user)
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
  return { id: user.id, email: user.email, name: user.name, metadata: user.metadata }
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function isUuid(value: string): boolean {
  return uuidPattern.test(value)
}
