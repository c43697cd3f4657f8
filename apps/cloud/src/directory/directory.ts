/**
 * Where accounts come from. The built-in directory (users in the cloud database, scrypt password
 * hashes) is what runs; a federated upstream identity provider plugs in by implementing the same
 * two calls, and the sign-in page and token issuing stay as they are.
 */
export interface IdentityDirectory {
  /** The account for these credentials, or null when they do not match (never says which part is wrong). */
  authenticate(email: string, password: string): Promise<Account | null>
  /** The account behind a token's `sub`, or undefined when it no longer exists. */
  find(accountId: string): Promise<Account | undefined>
}

export type Account = {
  id: string
  email: string
  name: string
  /** Whether the owner confirmed the address; an unconfirmed account cannot sign in. */
  emailVerified: boolean
  /** Identity-provider metadata, e.g. `giftedLicense`. */
  metadata: Record<string, unknown>
}
